"""The nsjail backend for real (skipped without nsjail unless LBP_REQUIRE_NSJAIL=1)."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from box_runtime.backends.base import ExecRequest
from box_runtime.backends.cgroups import CgroupPlan
from box_runtime.backends.nsjail import build_args
from box_runtime.child import start_box
from box_runtime.config import NsjailConfig
from box_runtime.errors import BoxMountDeniedError, BoxQuotaExceededError
from box_runtime.models import BoxExecutionStatus, BoxSpec
from box_runtime.output import clip_marker
from box_runtime.runtime import BoxRuntime
from tests.support.waiting import wait_until

from .helpers import (
    delete_while_a_command_runs,
    jail_state,
    read_files_of,
    remove_files_of,
    require_nsjail,
    skill_mount,
)
from .helpers import sandbox_plan as plan

pytestmark = pytest.mark.anyio


@pytest.fixture
def state() -> Iterator[Path]:
    yield from jail_state("lbp-nsjail-test-")


@pytest.fixture
async def runtime(state: Path) -> AsyncGenerator[BoxRuntime]:
    require_nsjail()
    box = BoxRuntime(
        config={
            "backend": "nsjail",
            "state_dir": str(state / "state"),
            "local": {"allowed_mount_roots": [str(state / "mounts")]},
        },
        environ={},
        cwd=str(state),
    )
    async with box.running():
        yield box


def spec(cmd: str, session_id: str = "s1", **fields: Any) -> BoxSpec:
    return BoxSpec.model_validate({"session_id": session_id, "cmd": cmd, **fields})


REQUEST = ExecRequest("echo hi", "/workspace", {"A": "1"}, 7.5, 1000, 0.6)


def test_args_have_an_explicit_time_limit_and_cgroup_v1_limits() -> None:
    cgroups = CgroupPlan(
        "v1",
        v1={
            "memory": ("/sys/fs/cgroup/memory", "me/lbp-box-jails"),
            "pids": ("/sys/fs/cgroup/pids", "lbp-box-jails"),
        },
        v1_memsw=True,
    )
    args = build_args(
        "/nsjail",
        plan("/s"),
        REQUEST,
        config=NsjailConfig(),
        cgroups=cgroups,
        uid=65534,
        log_path="/s/log",
        system_mounts=["/usr"],
    )
    joined = " ".join(args)
    assert "--time_limit 9" in joined  # ceil(7.5) + 1, never nsjail's default 600
    assert f"--cgroup_mem_max {256 * 1024 * 1024}" in joined
    assert f"--cgroup_mem_memsw_max {256 * 1024 * 1024}" in joined
    assert "--cgroup_mem_parent me/lbp-box-jails" in joined
    assert "--cgroup_pids_max 32" in joined
    assert "--rlimit_as inf" in joined
    assert "-B /s/ws:/workspace" in joined
    assert "-R /data/ro:/ro" in joined
    assert "-R /usr" in joined
    assert "--disable_clone_newnet" not in args
    assert "A=1" in args
    assert args[-2:] == ["/workspace", "echo hi"]


def test_args_for_cgroup_v2_and_for_rlimits_only() -> None:
    v2 = build_args(
        "/nsjail",
        plan("/s", network=True),
        REQUEST,
        config=NsjailConfig(max_time_limit_sec=5),
        cgroups=CgroupPlan("v2", v2_parent="/sys/fs/cgroup/box/lbp-box-jails"),
        uid=None,
        log_path="/s/log",
        system_mounts=[],
    )
    joined = " ".join(v2)
    assert "--use_cgroupv2 --cgroupv2_mount /sys/fs/cgroup/box/lbp-box-jails" in joined
    assert "--cgroup_cpu_ms_per_sec 1500" in joined
    assert "--time_limit 5" in joined  # capped by box.nsjail.max_time_limit_sec
    assert "--disable_clone_newnet" in v2
    plain = " ".join(
        build_args(
            "/nsjail",
            plan("/s"),
            REQUEST,
            config=NsjailConfig(),
            cgroups=CgroupPlan("none", reason="test"),
            uid=None,
            log_path="/s/log",
            system_mounts=[],
        )
    )
    assert "--rlimit_as 256" in plain
    assert "--rlimit_nproc 32" in plain
    assert "cgroup" not in plain


@pytest.mark.nsjail
async def test_exec_env_exit_code_and_isolation(runtime: BoxRuntime) -> None:
    result = await runtime.exec(
        spec('echo "$GREETING"; echo oops >&2; id -u; exit 5', env={"GREETING": "hi jail"}), None
    )
    assert result.backend_name == "nsjail"
    assert result.stdout.split("\n")[0] == "hi jail"
    assert result.stderr == "oops\n"
    assert result.exit_code == 5
    if os.geteuid() == 0:
        assert result.stdout.split("\n")[1] == "65534"
    probe = await runtime.exec(
        spec(
            "grep -c : /proc/net/dev; touch /usr/x 2>/dev/null || echo usr-read-only; "
            "ls /root 2>/dev/null || echo no-root; cat /etc/shadow 2>/dev/null || echo no-shadow; "
            "echo data > /workspace/f && cat /workspace/f; pwd"
        ),
        None,
    )
    assert probe.stdout == "1\nusr-read-only\nno-root\nno-shadow\ndata\n/workspace\n"


@pytest.mark.nsjail
async def test_memory_limit_kills_a_greedy_process(runtime: BoxRuntime) -> None:
    result = await runtime.exec(
        spec("python3 -c 'x = bytearray(300 * 1024 * 1024); print(len(x))'", memory_mb=64), None
    )
    assert result.exit_code != 0
    assert "314572800" not in result.stdout


@pytest.mark.nsjail
async def test_timeout_kills_the_command_and_keeps_the_session(runtime: BoxRuntime) -> None:
    await runtime.exec(spec("echo kept > /workspace/state"), None)
    result = await runtime.exec(spec("echo started; sleep 30", timeout_sec=1), None)
    assert result.status is BoxExecutionStatus.TIMED_OUT
    assert result.stdout == "started\n"
    after = await runtime.exec(spec("cat /workspace/state"), None)
    assert after.stdout == "kept\n"


@pytest.mark.nsjail
async def test_ten_megabytes_of_output(runtime: BoxRuntime) -> None:
    result = await runtime.exec(spec("head -c 10000000 /dev/zero | tr '\\0' y; echo END"), None)
    assert result.stdout_bytes == 10_000_004
    assert result.stdout_truncated
    marker = clip_marker(runtime.config.output.max_bytes, 10_000_004)
    assert result.stdout.endswith("yyyEND\n" + marker)


@pytest.mark.nsjail
async def test_sessions_are_separate_and_mounts_are_checked(
    runtime: BoxRuntime, state: Path
) -> None:
    await runtime.exec(spec("echo one > /workspace/mine; echo t > /tmp/t", "one"), None)
    other = await runtime.exec(spec("ls /workspace; ls /tmp", "two"), None)
    assert other.stdout == ""
    shared = state / "mounts" / "shared"
    await anyio.Path(shared).mkdir(mode=0o777)
    await anyio.Path(shared).chmod(0o777)
    written = await runtime.exec(spec("echo hi > out", "host", host_path=str(shared)), None)
    assert written.exit_code == 0, written.stderr
    assert await anyio.Path(shared / "out").read_text() == "hi\n"
    with pytest.raises(BoxMountDeniedError):
        await runtime.exec(spec("true", "bad", host_path="/root"), None)


@pytest.mark.nsjail
async def test_one_session_is_serialised(runtime: BoxRuntime) -> None:
    serial = "echo start >> /workspace/log; sleep 0.2; echo end >> /workspace/log"
    async with anyio.create_task_group() as tg:
        for _ in range(3):
            tg.start_soon(runtime.exec, spec(serial), None)
    log = await runtime.exec(spec("cat /workspace/log"), None)
    assert log.stdout == "start\nend\n" * 3


@pytest.mark.nsjail
async def test_deleting_a_session_ends_its_running_command_at_once(runtime: BoxRuntime) -> None:
    assert await delete_while_a_command_runs(runtime, None) == ["box_session_deleted"]
    assert runtime.sessions(None) == []


@pytest.mark.nsjail
async def test_a_workspace_quota_bounds_everything_a_jail_writes(runtime: BoxRuntime) -> None:
    """Workspace, /tmp and the home directory share the session's quota filesystem."""
    quota: dict[str, Any] = {"workspace_quota_mb": 50}
    info = await runtime.create_session(spec("", **quota), None)
    assert info.workspace_quota_enforcement == "filesystem"
    for target in ("/workspace/big", "/tmp/big", "/home/box/big"):
        full = await runtime.exec(
            spec(f"dd if=/dev/zero of={target} bs=1M count=200 2>&1; ls -l {target}", **quota),
            None,
        )
        assert "No space left" in full.stdout, full.stdout
        assert int(full.stdout.split()[-5]) <= 50 * 1024 * 1024
        assert full.workspace_quota is not None
        assert full.workspace_quota.limit == 50 * 1024 * 1024
        removed = await runtime.exec(spec(f"rm {target} && echo removed", **quota), None)
        assert removed.stdout == "removed\n"
        assert removed.workspace_quota is None


@pytest.mark.nsjail
async def test_a_watched_quota_stops_a_jail_that_keeps_writing(
    runtime: BoxRuntime, state: Path
) -> None:
    shared = state / "mounts" / "watched"
    await anyio.Path(shared).mkdir(mode=0o777)
    await anyio.Path(shared).chmod(0o777)
    fields = {"host_path": str(shared), "workspace_quota_mb": 20}
    many = "for i in $(seq 1 60); do dd if=/dev/zero of=f$i bs=1M count=2 2>/dev/null; sleep 0.05; done"
    with pytest.raises(BoxQuotaExceededError) as caught:
        await runtime.exec(spec(many, "watched", **fields), None)
    assert caught.value.actual > caught.value.limit == 20 * 1024 * 1024
    assert not await anyio.Path(shared / "f60").exists()
    assert (await runtime.exec(spec("rm f* && echo clean", "watched", **fields), None)).ok


def _jails_of(session_dir: str) -> list[int]:
    """Live nsjail processes logging into ``session_dir`` (read from /proc, as the Box does)."""
    from box_runtime.backends.nsjail import _jail_session_dir  # pyright: ignore[reportPrivateUsage]

    found: list[int] = []
    for pid in os.listdir("/proc"):
        if pid.isdigit() and _jail_session_dir(pid) == session_dir:
            with open(f"/proc/{pid}/stat", encoding="ascii") as stat_file:
                if stat_file.read().rsplit(")", 1)[1].split()[0] != "Z":
                    found.append(int(pid))
    return found


@pytest.mark.nsjail
async def test_startup_removes_only_this_deployments_leftover_jails_and_directories(
    state: Path,
) -> None:
    """A Box killed mid-command leaves its jail running; the next start cleans up after it."""
    require_nsjail()
    from box_runtime.session_dirs import write_marker

    config = {
        "backend": "nsjail",
        "deployment_id": "orphans-test",
        "state_dir": str(state / "state"),
        "local": {"allowed_mount_roots": [str(state / "mounts")]},
    }
    async with (
        start_box(config=config) as box,
        box.client() as client,
    ):
        process = box.process
        await client.exec(session_id="keep", cmd="echo kept > /workspace/f", persistent=True)
        await client.exec(session_id="temp", cmd="true")
        sessions = {s.session_id: s for s in await client.list_sessions()}
        temp_dir = os.path.dirname(sessions["temp"].backend_session_id + "/")
        async with anyio.create_task_group() as tg:

            async def hang() -> None:
                with contextlib.suppress(Exception):
                    await client.exec(
                        session_id="temp",
                        cmd="touch /workspace/started; exec sleep 600",
                        timeout_sec=100,
                    )

            tg.start_soon(hang)
            # Until the command runs, the jail's own child (not yet exec'd) is a second
            # nsjail process of this session: wait for the command, not for the jail.
            started = os.path.join(temp_dir, "workspace", "started")
            await wait_until(lambda: os.path.exists(started), seconds=30)
            await wait_until(lambda: len(_jails_of(temp_dir)) == 1, seconds=30)
            process.kill()  # the Box dies without cleaning up
            await process.wait()
            tg.cancel_scope.cancel()
    (orphan,) = _jails_of(temp_dir)
    keep_dir = sessions["keep"].backend_session_id
    foreign_dir = state / "state" / "sessions" / ("f" * 64)
    await anyio.Path(foreign_dir).mkdir()
    write_marker(
        str(foreign_dir),
        deployment_id="someone-else",
        session_id="x",
        workspace_uuid=None,
        persistent=False,
    )
    box = BoxRuntime(config=config, environ={}, cwd=str(state))
    try:
        async with box.running():
            assert (await box.backend_info()).available
            await wait_until(lambda: not _jails_of(temp_dir), seconds=30)
            assert not await anyio.Path(temp_dir).exists()
            assert await anyio.Path(keep_dir, "workspace", "f").read_text() == "kept\n"
            assert await anyio.Path(foreign_dir).exists()
            adopted = await box.exec(spec("cat /workspace/f", "keep", persistent=True), None)
            assert adopted.stdout == "kept\n"
    finally:
        if _jails_of(temp_dir):  # the test failed: do not leave our own jail running
            os.kill(orphan, signal.SIGKILL)


@pytest.mark.nsjail
async def test_explicit_export_from_a_jail(runtime: BoxRuntime) -> None:
    from box_runtime.errors import BoxExportRefusedError

    write = (
        "echo out > /workspace/out.txt; echo t > /tmp/t.txt; echo h > /home/box/h.txt; "
        "ln -s /etc/passwd /workspace/link; mkfifo /tmp/fifo"
    )
    assert (await runtime.exec(spec(write), None)).ok
    paths = ["/workspace/out.txt", "/tmp/t.txt", "/home/box/h.txt"]
    batch, _ = await read_files_of(runtime, "s1", None, paths, "run-1")
    assert [f.data for f in batch] == [b"out\n", b"t\n", b"h\n"]
    if os.geteuid() == 0:
        assert {f.uid for f in batch} == {65534}
    for path, reason in (
        ("/workspace/link", "symlink"),
        ("/tmp/fifo", "not_regular"),
        ("/usr/bin/env", "outside"),  # the host's system files are not the jail's own
    ):
        with anyio.fail_after(30), pytest.raises(BoxExportRefusedError) as caught:
            await read_files_of(runtime, "s1", None, [path], None)
        assert caught.value.details["reason"] == reason
    removed = await remove_files_of(runtime, "s1", None, [(f.path, f.sha256) for f in batch])
    assert removed == [(path, None) for path in paths]
    left = await runtime.exec(spec("ls /workspace /tmp /home/box"), None)
    assert "out.txt" not in left.stdout
    assert "fifo" in left.stdout
    assert "link" in left.stdout


@pytest.mark.nsjail
async def test_skills_are_mounted_read_only_in_a_jail(state: Path) -> None:
    require_nsjail()

    box = BoxRuntime(
        config={
            "backend": "nsjail",
            "state_dir": str(state / "state"),
            "local": {"host_root": str(state / "mounts")},
        },
        environ={},
        cwd=str(state),
    )
    mount = skill_mount(box)
    async with box.running():
        result = await box.exec(
            spec(
                "head -2 /workspace/.skills/tool/SKILL.md; "
                "touch /workspace/.skills/tool/x 2>&1 | grep -o 'Read-only file system'",
                extra_mounts=[mount],
            ),
            None,
        )
    assert result.stdout == "---\nname: tool\nRead-only file system\n", result.stderr
