"""The Docker backend against the real engine (skipped without one unless LBP_REQUIRE_DOCKER=1)."""

from __future__ import annotations

import secrets
import signal
import time
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from box_runtime.backends.docker_user import BOX_OWNED
from box_runtime.child import start_box
from box_runtime.errors import (
    BoxMountDeniedError,
    BoxQuotaExceededError,
    BoxValidationError,
)
from box_runtime.managed_process import ManagedProcess
from box_runtime.models import BoxExecutionStatus, BoxSpec
from box_runtime.output import clip_marker
from box_runtime.process_models import ManagedProcessSpec
from box_runtime.runtime import BoxRuntime
from box_runtime.sessions import Tenant

from .helpers import (
    delete_while_a_command_runs,
    read_files_of,
    remove_files_of,
    require_docker,
    skill_mount,
)

pytestmark = [pytest.mark.anyio, pytest.mark.docker]

BUSYBOX = "lbp-test-busybox:latest"
T = Tenant("inst-1", "ws-1", 1)


@pytest.fixture
def deployment() -> Iterator[str]:
    require_docker()
    import docker  # type: ignore[import-untyped]

    deployment_id = "t" + secrets.token_hex(5)
    yield deployment_id
    client = docker.from_env()
    for container in client.containers.list(
        all=True, filters={"label": f"langbot.box.deployment={deployment_id}"}
    ):
        container.remove(force=True)
    client.close()


@pytest.fixture
def state(tmp_path: Path) -> Path:
    (tmp_path / "mounts").mkdir()
    return tmp_path


def docker_config(state: Path, deployment: str, **extra: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "backend": "docker",
        "deployment_id": deployment,
        "state_dir": str(state / "state"),
        "local": {"image": BUSYBOX, "allowed_mount_roots": [str(state / "mounts")]},
        "docker": {"pull_missing_images": False},
    }
    config.update(extra)
    return config


MODES = {
    "agent": {"exec_agent": True, "fast_output": True},
    "exec+fifo": {"exec_agent": False, "fast_output": True},
    "exec+stream": {"exec_agent": False, "fast_output": False},
}


@pytest.fixture(params=sorted(MODES))
async def runtime(
    state: Path, deployment: str, request: pytest.FixtureRequest
) -> AsyncGenerator[BoxRuntime]:
    """Every exec path: the in-container agent, docker exec with pipes, docker exec alone."""
    docker = {"pull_missing_images": False, **MODES[request.param]}
    config = docker_config(state, deployment, docker=docker)
    box = BoxRuntime(config=config, environ={}, cwd=str(state))
    async with box.running():
        yield box


def containers(deployment: str) -> list[Any]:
    import docker  # type: ignore[import-untyped]

    client = docker.from_env()
    try:
        return client.containers.list(
            all=True, filters={"label": f"langbot.box.deployment={deployment}"}
        )
    finally:
        client.close()


def spec(cmd: str, session_id: str = "s1", **fields: Any) -> BoxSpec:
    return BoxSpec.model_validate({"session_id": session_id, "cmd": cmd, **fields})


async def test_exec_env_exit_code_and_streams(runtime: BoxRuntime) -> None:
    result = await runtime.exec(
        spec('echo "$GREETING"; echo oops >&2; exit 7', env={"GREETING": "hello box"}), T
    )
    assert result.stdout == "hello box\n"
    assert result.stderr == "oops\n"
    assert result.exit_code == 7
    assert result.status is BoxExecutionStatus.COMPLETED
    assert result.backend_name == "docker"
    again = await runtime.exec(spec("pwd; cat /etc/hostname"), T)
    assert again.stdout == "/workspace\nbox\n"


async def test_the_container_is_locked_down(runtime: BoxRuntime) -> None:
    script = (
        "grep -E 'CapEff|NoNewPrivs' /proc/self/status; "
        "grep -c : /proc/net/dev; "
        "touch /rootfs-write 2>/dev/null && echo root-writable || echo root-read-only; "
        "touch /tmp/ok && echo tmp-writable; "
        "cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory.max 2>/dev/null; "
        "cat /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/pids.max 2>/dev/null; "
        "cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu.max 2>/dev/null"
    )
    result = await runtime.exec(spec(script, memory_mb=96, pids_limit=50, cpus=0.5), T)
    lines = result.stdout.split("\n")
    assert "CapEff:\t0000000000000000" in lines
    assert "NoNewPrivs:\t1" in lines
    assert lines[2] == "1"  # /proc/net/dev: only "lo" (network off)
    assert "root-read-only" in lines
    assert "tmp-writable" in lines
    assert str(96 * 1024 * 1024) in lines[5]
    assert lines[6] == "50"
    assert lines[7].split()[0] == "50000"  # 0.5 CPU of a 100 ms period


async def test_timeout_kills_only_that_command(runtime: BoxRuntime) -> None:
    first = await runtime.create_session(spec(""), T)
    result = await runtime.exec(
        spec("echo started; sleep 30 & sleep 31; echo never", timeout_sec=1), T
    )
    assert result.status is BoxExecutionStatus.TIMED_OUT
    assert result.exit_code is None
    assert result.stdout == "started\n"
    after = await runtime.exec(spec("ps -o args | grep -c '^sleep 3[01]' || true"), T)
    assert after.stdout.strip() == "0"  # the whole process group is gone
    assert runtime.get_session("s1", T).backend_session_id == first.backend_session_id


async def test_deleting_a_session_ends_its_running_command_at_once(
    runtime: BoxRuntime, deployment: str
) -> None:
    assert await delete_while_a_command_runs(runtime, T) == ["box_session_deleted"]
    assert containers(deployment) == []


async def test_ten_megabytes_of_output_keep_head_and_tail(runtime: BoxRuntime) -> None:
    result = await runtime.exec(
        spec("echo HEAD; head -c 10000000 /dev/zero | tr '\\0' x; echo; echo TAIL"), T
    )
    assert result.stdout_truncated
    assert result.stdout_bytes == 10_000_000 + len("HEAD\n\nTAIL\n")
    assert result.stdout.startswith("HEAD\nxxx")
    total = 10_000_000 + len("HEAD\n\nTAIL\n")
    assert result.stdout.endswith(
        "xxx\nTAIL\n" + clip_marker(runtime.config.output.max_bytes, total)
    )
    assert len(result.stdout.encode()) < runtime.config.output.max_bytes + 200
    assert result.exit_code == 0


async def test_mounts_allowed_read_only_and_refused(runtime: BoxRuntime, state: Path) -> None:
    shared = state / "mounts" / "project"
    await anyio.Path(shared).mkdir()
    await anyio.Path(shared / "input.txt").write_text("from the host\n")
    result = await runtime.exec(
        spec("cat input.txt; echo from-box > output.txt", "rw", host_path=str(shared)), T
    )
    assert result.stdout == "from the host\n"
    assert await anyio.Path(shared / "output.txt").read_text() == "from-box\n"
    read_only = await runtime.exec(
        spec("echo x > nope.txt", "ro", host_path=str(shared), host_path_mode="ro"), T
    )
    assert read_only.exit_code != 0
    assert "Read-only" in read_only.stderr
    with pytest.raises(BoxMountDeniedError):
        await runtime.exec(spec("true", "etc", host_path="/etc"), T)
    await anyio.Path(state / "mounts" / "escape").symlink_to("/var/lib")
    with pytest.raises(BoxMountDeniedError):
        await runtime.exec(
            spec(
                "true",
                "extra",
                extra_mounts=[{"host_path": str(state / "mounts" / "escape"), "mount_path": "/x"}],
            ),
            T,
        )


async def test_a_container_removed_behind_our_back_is_recreated(
    runtime: BoxRuntime, deployment: str
) -> None:
    await runtime.exec(spec("echo kept > /workspace/file"), T)
    (container,) = containers(deployment)
    await anyio.to_thread.run_sync(lambda: container.remove(force=True))
    result = await runtime.exec(spec("cat /workspace/file"), T)
    assert result.stdout == "kept\n"  # the workspace lives on the host
    (replacement,) = containers(deployment)
    assert replacement.id != container.id


async def test_a_container_stopped_behind_our_back_is_recreated(
    runtime: BoxRuntime, deployment: str
) -> None:
    await runtime.exec(spec("true"), T)
    (container,) = containers(deployment)
    await anyio.to_thread.run_sync(container.kill)
    result = await runtime.exec(spec("echo alive"), T)
    assert result.stdout == "alive\n"


async def test_sessions_run_concurrently_and_one_session_is_serialised(
    runtime: BoxRuntime, state: Path
) -> None:
    meeting = state / "mounts" / "meeting"
    await anyio.Path(meeting).mkdir()
    # Three sessions each arrive and wait until all three are present: only possible
    # when their commands overlap in time.
    rendezvous = (
        "touch $ME; i=0; while [ $(ls | wc -l) -lt 3 ] && [ $i -lt 200 ]; "
        "do sleep 0.05; i=$((i+1)); done; ls | wc -l"
    )
    results: list[str] = []

    async def meet(name: str) -> None:
        result = await runtime.exec(
            spec(rendezvous, name, host_path=str(meeting), env={"ME": name}), T
        )
        results.append(result.stdout.strip())

    async with anyio.create_task_group() as tg:
        for name in ("a", "b", "c"):
            tg.start_soon(meet, name)
    assert results == ["3", "3", "3"]

    serial = "echo start >> /workspace/log; sleep 0.2; echo end >> /workspace/log"
    async with anyio.create_task_group() as tg:
        for _ in range(3):
            tg.start_soon(runtime.exec, spec(serial, "serial"), T)
    log = await runtime.exec(spec("cat /workspace/log", "serial"), T)
    assert log.stdout == "start\nend\n" * 3


async def test_non_root_user(state: Path, deployment: str) -> None:
    config = docker_config(state, deployment, docker={"user": "65534:65534"})
    box = BoxRuntime(config=config, environ={}, cwd=str(state))
    async with box.running():
        result = await box.exec(spec("id -u; echo x > /workspace/f && echo wrote"), T)
    assert result.stdout == "65534\nwrote\n"


async def test_a_workdir_that_cannot_be_made(runtime: BoxRuntime) -> None:
    result = await runtime.exec(spec("pwd", workdir="/proc/nope/x"), T)
    assert result.exit_code == 126
    assert "mkdir" in result.stderr


async def test_missing_image_is_a_clear_error(runtime: BoxRuntime) -> None:
    with pytest.raises(BoxValidationError, match="lbp box image build"):
        await runtime.exec(spec("true", image="lbp-test-no-such-image:latest"), T)


async def test_orphan_cleanup_removes_only_this_deployments_leftovers(
    state: Path, deployment: str
) -> None:
    import docker.errors  # type: ignore[import-untyped]

    client = docker.from_env()
    foreign_id = "t" + secrets.token_hex(5)

    def run(labels: dict[str, str]) -> Any:
        return client.containers.run(
            BUSYBOX, ["sleep", "infinity"], detach=True, network_mode="none", labels=labels
        )

    mine = run({"langbot.box": "true", "langbot.box.deployment": deployment})
    kept = run(
        {
            "langbot.box": "true",
            "langbot.box.deployment": deployment,
            "langbot.box.persistent": "true",
        }
    )
    foreign = run({"langbot.box": "true", "langbot.box.deployment": foreign_id})
    unlabelled = run({})
    try:
        box = BoxRuntime(config=docker_config(state, deployment), environ={}, cwd=str(state))
        async with box.running():
            assert (await box.backend_info()).available
        remaining = {c.id for c in client.containers.list(all=True)}
        assert mine.id not in remaining
        assert {kept.id, foreign.id, unlabelled.id} <= remaining
    finally:
        for container in (mine, kept, foreign, unlabelled):
            try:
                container.remove(force=True)
            except docker.errors.NotFound:
                pass
        client.close()


async def test_the_default_image_runs_as_nobody_with_a_writable_home(
    state: Path, deployment: str
) -> None:
    """``lbp box image build``'s image settings, on the test image's root filesystem
    (the Debian build itself needs a mirror): not root even with ``docker.user: ""``."""
    from box_runtime.image import build_commands

    tag = f"lbp-test-default-{deployment}:latest"
    _, importer = build_commands(tag=tag, suite="bookworm", include=[], mirror="", docker="docker")
    source = (await anyio.run_process(["docker", "create", BUSYBOX, "true"])).stdout.strip()
    try:
        exported = await anyio.run_process(["docker", "export", source.decode()])
        await anyio.run_process(importer, input=exported.stdout)
        config = docker_config(state, deployment, docker={"user": ""})
        config["local"]["image"] = tag
        box = BoxRuntime(config=config, environ={}, cwd=str(state))
        async with box.running():
            result = await box.exec(spec("id -u; echo $HOME; touch ~/.cache-ok && echo ok"), T)
        assert result.stdout == "65534\n/tmp\nok\n", result.stderr
    finally:
        await anyio.run_process(["docker", "rm", "-f", source.decode()], check=False)
        await anyio.run_process(["docker", "rmi", "-f", tag], check=False)


async def test_sigterm_removes_non_persistent_sessions(state: Path, deployment: str) -> None:
    async with start_box(config=docker_config(state, deployment)) as box:
        process = box.process
        async with box.client() as client:
            await client.exec(session_id="temp", cmd="true")
            await client.exec(session_id="keep", cmd="true", persistent=True)
        assert len(containers(deployment)) == 2
        process.send_signal(signal.SIGTERM)
        with anyio.fail_after(60):
            assert await process.wait() == 0
    left = containers(deployment)
    assert [c.labels["langbot.box.session"] for c in left] == ["keep"]


def test_no_agent_means_none(tmp_path: Path) -> None:
    from box_runtime.backends.docker_agent import run_via_agent
    from box_runtime.backends.docker_io import Abort
    from box_runtime.output import OutputCollector

    ran = run_via_agent(
        str(tmp_path),
        "ab12",
        "true\n",
        stdout=OutputCollector(100),
        stderr=OutputCollector(100),
        deadline=float("inf"),
        abort=Abort(),
        connect_wait=0.01,
    )
    assert ran is None


async def test_the_agent_replaces_docker_exec(state: Path, deployment: str) -> None:
    box = BoxRuntime(config=docker_config(state, deployment), environ={}, cwd=str(state))
    async with box.running():
        for _ in range(3):
            assert (await box.exec(spec("echo via-agent"), T)).stdout == "via-agent\n"
        (container,) = containers(deployment)
        container.reload()
        assert not container.attrs.get("ExecIDs")  # no docker exec was needed


async def test_managed_processes_start_through_the_agent(state: Path, deployment: str) -> None:
    """Started at once, each with its environment and cwd, none lost: no docker exec."""
    box = BoxRuntime(config=docker_config(state, deployment), environ={}, cwd=str(state))
    script = 'read x; echo "$x-$V-$(pwd)"; echo to-stderr >&2; exit 3'
    specs = [
        ManagedProcessSpec(
            process_id=f"p{i}", command="sh", args=["-c", script], env={"V": f"v{i}"}, cwd="/tmp"
        )
        for i in range(6)
    ]
    async with box.running():
        await box.create_session(spec("", "mcp", persistent=False), T)
        processes: dict[int, ManagedProcess] = {}

        async def start(i: int) -> None:
            processes[i], _ = await box.start_managed_process("mcp", specs[i], T)

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                for i in range(len(specs)):
                    tg.start_soon(start, i)
            for i, process in processes.items():
                await process.inbox.put(b"hi\n", 3)
                assert await process.outbox.get() == f"hi-v{i}-/tmp"
                await process.finished.wait()
                info = process.info()
                assert (info.exit_code, info.stderr_preview) == (3, "to-stderr\n")
        (container,) = containers(deployment)
        assert await anyio.to_thread.run_sync(exec_events, container.id) == []


def exec_events(container_id: str) -> list[Any]:
    """The engine's ``exec_create`` events of a container so far."""
    import docker  # type: ignore[import-untyped]

    client = docker.from_env()
    try:
        filters = {"container": container_id, "event": "exec_create"}
        return list(client.events(since=0, until=int(time.time()) + 1, filters=filters))
    finally:
        client.close()


@pytest.mark.timeout(180)  # about 30 s on a busy 2-CPU machine
async def test_a_planted_symlink_cannot_redirect_host_writes(state: Path, deployment: str) -> None:
    canary = state / "canary"
    await anyio.Path(canary).mkdir()
    box = BoxRuntime(config=docker_config(state, deployment), environ={}, cwd=str(state))
    async with box.running():
        await box.exec(spec("true"), T)
        # The sandbox swaps the agent directory for a symlink to a host path: through
        # /proc/<pid>/root an absolute link would resolve against the host's root.
        plant = f"rm -rf /tmp/.lbp-agent && ln -s {canary} /tmp/.lbp-agent && echo planted"
        assert (await box.exec(spec(plant), T)).stdout == "planted\n"
        for _ in range(2):
            assert (await box.exec(spec("echo still-works"), T)).stdout == "still-works\n"
    assert [p async for p in anyio.Path(canary).iterdir()] == []


async def test_a_background_process_holding_stdout_does_not_hang_the_agent_path(
    state: Path, deployment: str
) -> None:
    box = BoxRuntime(config=docker_config(state, deployment), environ={}, cwd=str(state))
    async with box.running():
        result = await box.exec(spec("sleep 30 & echo started", timeout_sec=20), T)
        assert result.status is BoxExecutionStatus.COMPLETED
        assert result.stdout == "started\n"
        assert result.exit_code == 0


async def test_a_workspace_quota_bounds_what_a_session_writes(runtime: BoxRuntime) -> None:
    """The 2 GiB-under-100 MiB defect: the kernel now stops the writes at the quota."""
    quota: dict[str, Any] = {"workspace_quota_mb": 100}
    info = await runtime.create_session(spec("", **quota), T)
    assert info.workspace_quota_enforcement == "filesystem"
    big = await runtime.exec(
        spec("dd if=/dev/zero of=/workspace/big bs=1M count=300; ls -l /workspace/big", **quota), T
    )
    assert "No space left" in big.stderr
    assert big.workspace_quota is not None
    assert big.workspace_quota.limit == 100 * 1024 * 1024
    assert big.workspace_quota.actual <= 100 * 1024 * 1024
    size = int(big.stdout.split()[4])
    assert 90 * 1024 * 1024 < size <= 100 * 1024 * 1024
    # Still usable, and deleting the file repairs it.
    repaired = await runtime.exec(spec("rm /workspace/big && echo removed", **quota), T)
    assert repaired.stdout == "removed\n"
    again = await runtime.exec(spec("head -c 1000000 /dev/zero > /workspace/small", **quota), T)
    assert again.ok
    assert again.workspace_quota is None


async def test_a_host_path_quota_is_watched(runtime: BoxRuntime, state: Path) -> None:
    shared = state / "mounts" / "quota-host"
    await anyio.Path(shared).mkdir()
    fields = {"host_path": str(shared), "workspace_quota_mb": 20}
    info = await runtime.create_session(spec("", "watched", **fields), T)
    assert info.workspace_quota_enforcement == "watch"
    one_file = await runtime.exec(
        spec("dd if=/dev/zero of=one bs=1M count=50 2>&1; echo done", "watched", **fields), T
    )
    assert (await anyio.Path(shared / "one").stat()).st_size <= 20 * 1024 * 1024  # RLIMIT_FSIZE
    assert one_file.workspace_quota is not None
    await anyio.Path(shared / "one").unlink()
    many = "for i in $(seq 1 60); do dd if=/dev/zero of=f$i bs=1M count=2 2>/dev/null; sleep 0.05; done"
    with pytest.raises(BoxQuotaExceededError) as caught:
        await runtime.exec(spec(many, "watched", **fields), T)
    assert caught.value.limit == 20 * 1024 * 1024
    assert caught.value.actual > caught.value.limit
    assert not await anyio.Path(shared / "f60").exists()  # stopped before it finished
    assert (await runtime.exec(spec("rm f* && echo clean", "watched", **fields), T)).ok


async def test_storage_analysis_sees_inside_the_container(runtime: BoxRuntime) -> None:
    from box_runtime.storage_report import analyse

    await runtime.exec(
        spec("head -c 300000 /dev/zero > /tmp/t; head -c 1000 /dev/zero > /workspace/w"), T
    )
    report = await analyse(runtime.current_backend, runtime.sessions(T), max_entries=1000)
    by_key = {d.key: d for d in report.directories}
    assert by_key["session_temp"].size_bytes >= 300_000
    assert by_key["session_temp"].error_count == 0
    assert by_key["session_workspaces"].size_bytes == 1000


async def test_explicit_export_reads_what_the_sandbox_wrote_and_nothing_else(
    runtime: BoxRuntime,
) -> None:
    """The sandbox user's 0600 output, exact bytes, no link or FIFO followed, compare-and-delete."""
    from box_runtime.errors import BoxExportRefusedError
    from box_runtime.export import read_files

    write = (
        "mkdir -p /workspace/outbox && head -c 200000 /dev/urandom > /workspace/outbox/r.bin "
        "&& chmod 600 /workspace/outbox/r.bin && echo report > /tmp/report.txt "
        "&& ln -s /etc/hostname /workspace/outbox/link && mkfifo /workspace/outbox/fifo "
        "&& sha256sum /workspace/outbox/r.bin /tmp/report.txt"
    )
    result = await runtime.exec(spec(write), T)
    assert result.ok, result.stderr
    digests = [line.split()[0] for line in result.stdout.splitlines()]
    (session,) = runtime.sessions(T)
    batch, _ = await read_files_of(
        runtime, "s1", T, ["/workspace/outbox/r.bin", "/tmp/report.txt"], None
    )
    assert [f.sha256 for f in batch] == digests
    assert (batch[0].mode, batch[0].uid, batch[0].gid) == (0o600, *BOX_OWNED)
    assert batch[1].data == b"report\n"
    for path, reason in (
        ("/workspace/outbox/link", "symlink"),
        ("/workspace/outbox/fifo", "not_regular"),
        ("/workspace/outbox", "not_regular"),
        ("/workspace/outbox/none", "missing"),
    ):
        with anyio.fail_after(30), pytest.raises(BoxExportRefusedError) as caught:
            await read_files_of(runtime, "s1", T, [path], None)
        assert caught.value.details["reason"] == reason, path
    kept = await remove_files_of(
        runtime, "s1", T, [(batch[0].path, batch[0].sha256), (batch[1].path, "0" * 64)]
    )
    assert kept == [("/workspace/outbox/r.bin", None), ("/tmp/report.txt", "changed")]
    after = await runtime.exec(spec("ls /workspace/outbox; cat /tmp/report.txt"), T)
    assert after.stdout == "fifo\nlink\nreport\n"
    del read_files, session


async def test_export_follows_the_container_users_rights(state: Path, deployment: str) -> None:
    from box_runtime.errors import BoxExportRefusedError

    config = docker_config(state, deployment, docker={"user": "65534:65534"})
    box = BoxRuntime(config=config, environ={}, cwd=str(state))
    async with box.running():
        await box.exec(spec("echo mine > /workspace/mine.txt"), T)
        (session,) = box.sessions(T)
        secret = anyio.Path(session.workspace_dir, "secret.txt")
        await secret.write_text("root only")
        await secret.chmod(0o600)
        with pytest.raises(BoxExportRefusedError) as caught:
            await read_files_of(box, "s1", T, ["/workspace/secret.txt"], None)
        assert caught.value.details["reason"] == "unreadable"
        (mine,) = (await read_files_of(box, "s1", T, ["/workspace/mine.txt"], None))[0]
        assert (mine.data, mine.uid) == (b"mine\n", 65534)


async def test_skills_are_mounted_read_only_in_the_session(state: Path, deployment: str) -> None:

    config = docker_config(state, deployment)
    config["local"]["host_root"] = str(state / "mounts")
    box = BoxRuntime(config=config, environ={}, cwd=str(state))
    mount = skill_mount(box)
    async with box.running():
        result = await box.exec(
            spec(
                "head -3 /workspace/.skills/tool/SKILL.md; "
                "touch /workspace/.skills/tool/x 2>&1 || echo refused",
                extra_mounts=[mount],
            ),
            T,
        )
    assert result.stdout.startswith("---\nname: tool\n")
    assert "Read-only" in result.stdout
    assert "refused" in result.stdout


MISSING = "lbp-test-no-such-image:latest"


@pytest.mark.parametrize(("image", "status"), [(MISSING, 503), (BUSYBOX, 200)])
async def test_readyz_says_whether_the_sandbox_image_is_there(
    state: Path, deployment: str, image: str, status: int
) -> None:
    import aiohttp

    from .helpers import served_box

    local = {"image": image, "allowed_mount_roots": [str(state / "mounts")]}
    runtime = BoxRuntime(config=docker_config(state, deployment, local=local), cwd=str(state))
    async with served_box(runtime) as box, aiohttp.ClientSession() as http:
        ready = await http.get(f"http://127.0.0.1:{box.port}/readyz")
        assert ready.status == status
        body = await ready.json()
    if status == 503:
        assert body["backend"]["name"] == "docker"
        assert f"'lbp box image build --tag {MISSING}'" in body["backend"]["reason"]


async def test_before_box_init_a_missing_image_fails_at_once(
    state: Path, deployment: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A Box no host configured waits for a box_init before its first command; a
    command whose image the engine lacks (and cannot pull) fails first, with why."""
    caplog.set_level("INFO", logger="box_runtime")
    runtime = BoxRuntime(environ={}, cwd=str(state), backend="docker")
    assert runtime.settings.awaiting_init
    async with runtime.running():
        with pytest.raises(BoxValidationError, match="lbp box image build"):
            await runtime.exec(spec("true", image=MISSING), T)
    assert "no box_init within" not in caplog.text
