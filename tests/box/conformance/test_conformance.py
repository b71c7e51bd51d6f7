"""What every sandbox backend does, checked the same way on each (see candidates.py).

The core: exec with its streams and exit status, the environment, the working
directory, timeouts that kill only the command, output limits that keep head and tail,
separate sessions, a delete that ends a running command at once, managed processes,
explicit export, and memory limits where the backend has them. Each test runs on every
candidate of :data:`~.candidates.CANDIDATES`; one that cannot run here is skipped with
its reason (a failure when its ``LBP_REQUIRE_*`` variable is 1).
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import AsyncGenerator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from box_runtime.backends.docker_user import BOX_OWNED
from box_runtime.errors import BoxArtifactDigestError, BoxArtifactRefusedError
from box_runtime.managed_process import STDERR_PREVIEW_BYTES
from box_runtime.models import BoxExecutionStatus, BoxSpec
from box_runtime.output import clip_marker
from box_runtime.process_models import ManagedProcessSpec, ManagedProcessStatus
from box_runtime.runtime import BoxRuntime
from box_runtime.sessions import SessionKey, Tenant
from tests.box.helpers import (
    delete_while_a_command_runs,
    jail_state,
    read_files_of,
    remove_files_of,
)
from tests.box.revisions import Revision, publish_revision
from tests.support.waiting import PATIENCE, wait_until

from .candidates import CANDIDATES, SHELL, Candidate

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

T = Tenant("inst-1", "ws-1", 1)


@dataclass
class Box:
    runtime: BoxRuntime
    candidate: Candidate
    deployment: str

    def path(self, text: str, session_id: str = "s1") -> str:
        """``text`` with the suite's sandbox paths as the session's commands see them."""
        session_dir = os.path.join(
            self.runtime.settings.state_dir, "sessions", SessionKey(T, session_id).digest
        )
        seen = self.candidate.paths(session_dir)
        if not seen:
            return text
        pattern = "|".join(re.escape(path) for path in seen)
        return re.sub(rf"({pattern})(?![\w.-])", lambda m: seen[m.group(1)], text)


@pytest.fixture(params=CANDIDATES, ids=[c.id for c in CANDIDATES])
def candidate(request: pytest.FixtureRequest) -> Candidate:
    found: Candidate = request.param
    reason = found.reason()
    if reason is not None:
        if found.require and os.environ.get(f"LBP_REQUIRE_{found.require}") == "1":
            pytest.fail(f"LBP_REQUIRE_{found.require}=1 but {reason}")
        pytest.skip(reason)
    return found


@pytest.fixture
def state() -> Iterator[Path]:
    yield from jail_state("lbp-conformance-")


@pytest.fixture
async def box(candidate: Candidate, state: Path) -> AsyncGenerator[Box]:
    deployment = "c" + secrets.token_hex(5)
    config: dict[str, Any] = {
        "backend": candidate.backend,
        "deployment_id": deployment,
        "state_dir": str(state / "state"),
        "local": {"allowed_mount_roots": [str(state / "mounts")]},
    }
    for key, value in candidate.config(state).items():
        config[key] = {**config.get(key, {}), **value} if isinstance(value, dict) else value
    runtime = BoxRuntime(
        config=config,
        factories=candidate.factories() if candidate.factories else None,
        environ={},
        cwd=str(state),
    )
    try:
        async with runtime.running():
            yield Box(runtime, candidate, deployment)
        # Closing the runtime removed every sandbox it made.
        assert await anyio.to_thread.run_sync(candidate.leftovers, deployment, False) == []
    finally:
        await anyio.to_thread.run_sync(candidate.leftovers, deployment, True)


def spec(cmd: str, session_id: str = "s1", **fields: Any) -> BoxSpec:
    return BoxSpec.model_validate({"session_id": session_id, "cmd": cmd, **fields})


async def test_exec_streams_and_exit_status(box: Box) -> None:
    result = await box.runtime.exec(spec("echo hello; echo oops >&2; exit 7"), T)
    assert (result.stdout, result.stderr, result.exit_code) == ("hello\n", "oops\n", 7)
    assert result.status is BoxExecutionStatus.COMPLETED
    assert result.backend_name == box.candidate.backend
    assert not result.stdout_truncated
    ok = await box.runtime.exec(spec("echo again"), T)
    assert (ok.stdout, ok.exit_code) == ("again\n", 0)


async def test_the_environment_reaches_the_command(box: Box) -> None:
    env = {"GREETING": "hello box", "QUOTED": "a 'b' \"c\" $HOME"}
    show = box.candidate.dialect.print_env
    result = await box.runtime.exec(spec(f"{show('GREETING')}; {show('QUOTED')}", env=env), T)
    assert result.stdout == "hello box\na 'b' \"c\" $HOME\n"
    unset = await box.runtime.exec(spec(show("GREETING")), T)
    assert unset.exit_code != 0  # nothing of one command's env stays for the next


async def test_the_working_directory(box: Box) -> None:
    assert (await box.runtime.exec(spec("pwd"), T)).stdout == box.path("/workspace\n")
    deeper = await box.runtime.exec(spec("pwd; echo here > rel.txt", workdir="/workspace/a/b"), T)
    assert deeper.stdout == box.path("/workspace/a/b\n")
    (session,) = box.runtime.sessions(T)
    host_file = anyio.Path(session.workspace_dir, "a", "b", "rel.txt")
    assert await host_file.read_text() == "here\n"


async def test_a_timeout_kills_the_command_and_keeps_the_session(box: Box) -> None:
    first = await box.runtime.create_session(spec(""), T)
    result = await box.runtime.exec(spec("echo started; sleep 30", timeout_sec=1), T)
    assert result.status is BoxExecutionStatus.TIMED_OUT
    assert result.exit_code is None
    assert result.stdout == "started\n"
    assert "timed out" in result.stderr
    after = await box.runtime.exec(spec("echo alive"), T)
    assert after.stdout == "alive\n"
    assert box.runtime.get_session("s1", T).backend_session_id == first.backend_session_id


async def test_output_beyond_the_limit_keeps_head_and_tail(box: Box) -> None:
    size = 10_000_000
    many = box.candidate.dialect.many_bytes(size)
    command = f"echo HEAD; {many}; echo; echo TAIL; {many} >&2"
    result = await box.runtime.exec(spec(command), T)
    assert result.exit_code == 0
    assert result.stdout_truncated
    total = size + len("HEAD\n\nTAIL\n")
    assert result.stdout_bytes == total
    limit = box.runtime.config.output.max_bytes
    # The released host recognises a cut only by this line at the very end.
    assert result.stdout.startswith("HEAD\nxxx")
    assert result.stdout.endswith(f"xxx\nTAIL\n{clip_marker(limit, total)}")
    assert len(result.stdout.encode()) < limit + 200
    assert result.stderr_truncated
    assert result.stderr.endswith(f"xxx{clip_marker(limit, size)}")


async def test_sessions_do_not_share_files(box: Box) -> None:
    write = box.path("echo one > /workspace/mine; echo t > /tmp/t", "one")
    await box.runtime.exec(spec(write, "one"), T)
    other = await box.runtime.exec(
        spec(box.path("cat /workspace/mine; cat /tmp/t", "two"), "two"), T
    )
    assert other.exit_code != 0
    assert other.stdout == ""
    mine = await box.runtime.exec(spec("cat /workspace/mine", "one"), T)
    assert mine.stdout == "one\n"


async def test_deleting_a_session_ends_its_running_command_at_once(box: Box) -> None:
    codes = await delete_while_a_command_runs(box.runtime, T, box.candidate.live_workspace)
    assert codes == ["box_session_deleted"]
    assert box.runtime.sessions(T) == []
    assert await anyio.to_thread.run_sync(box.candidate.leftovers, box.deployment, False) == []


async def test_a_managed_process_speaks_over_its_stdio(box: Box) -> None:
    await box.runtime.create_session(spec("", "mcp", persistent=False), T)
    command, *args = box.candidate.dialect.echo_program
    process_spec = ManagedProcessSpec(process_id="p1", command=command, args=args)
    process, reused = await box.runtime.start_managed_process("mcp", process_spec, T)
    assert not reused
    line = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    await process.inbox.put(line, len(line))
    with anyio.fail_after(30):
        assert await process.outbox.get() == line.decode().strip()
    await box.runtime.stop_managed_process("mcp", "p1", T)
    info = box.runtime.managed_process("mcp", "p1", T).info()
    assert info.status is ManagedProcessStatus.EXITED


async def test_a_cut_stderr_preview_ends_with_the_clip_marker(box: Box) -> None:
    await box.runtime.create_session(spec("", "mcp", persistent=False), T)
    command, *args = box.candidate.dialect.noisy_program(10_000)
    process_spec = ManagedProcessSpec(process_id="p1", command=command, args=args)
    process, _ = await box.runtime.start_managed_process("mcp", process_spec, T)
    marker = clip_marker(STDERR_PREVIEW_BYTES, 10_001)
    await wait_until(lambda: process.info().stderr_preview.endswith(marker))
    assert process.info().stderr_preview.startswith("... [")
    await box.runtime.stop_managed_process("mcp", "p1", T)


async def test_explicit_export_reads_and_removes_what_the_sandbox_wrote(box: Box) -> None:
    write = box.path("echo out > /workspace/out.txt; echo t > /tmp/t.txt")
    assert (await box.runtime.exec(spec(write), T)).exit_code == 0
    paths = ["/workspace/out.txt", "/tmp/t.txt"]
    batch, _ = await read_files_of(box.runtime, "s1", T, paths, "run-1")
    assert [(f.path, f.data) for f in batch] == [(paths[0], b"out\n"), (paths[1], b"t\n")]
    removed = await remove_files_of(box.runtime, "s1", T, [(f.path, f.sha256) for f in batch])
    assert removed == [(path, None) for path in paths]
    gone = await box.runtime.exec(spec("cat /workspace/out.txt"), T)
    assert gone.exit_code != 0


def containers_only(box: Box) -> None:
    if box.candidate.backend not in ("docker", "podman"):
        pytest.skip(f"{box.candidate.id} runs no container (docker.user does not apply)")


async def test_a_container_runs_as_nobody_in_a_workspace_the_box_made(box: Box) -> None:
    containers_only(box)
    result = await box.runtime.exec(
        spec("id -u; id -g; mkdir /workspace/d; echo x > /workspace/d/f"), T
    )
    assert (result.stdout, result.exit_code) == (f"{BOX_OWNED[0]}\n{BOX_OWNED[1]}\n", 0), (
        result.stderr
    )
    (session,) = box.runtime.sessions(T)
    made = os.stat(os.path.join(session.workspace_dir, "d", "f"))
    assert (made.st_uid, made.st_gid) == BOX_OWNED


@pytest.mark.parametrize("owner", [(1234, 2345), (0, 0)], ids=["user", "root"])
async def test_a_container_runs_as_the_owner_of_a_host_workspace(
    box: Box, state: Path, owner: tuple[int, int]
) -> None:
    # What the released host does there: its attachments, written as itself, mode 0600
    # in a 0700 folder; the sandbox must read them and write beside them.
    containers_only(box)
    workspace = state / "mounts" / "tenant"
    inbox = workspace / "inbox" / "q1"
    inbox.mkdir(parents=True)
    (inbox / "in.txt").write_text("from the host")
    (inbox / "in.txt").chmod(0o600)
    for path in (workspace, workspace / "inbox", inbox, inbox / "in.txt"):
        os.chown(path, *owner)
        if path.is_dir():
            path.chmod(0o700)
    command = "id -u; cat /workspace/inbox/q1/in.txt; mkdir -p /workspace/outbox; echo out > /workspace/outbox/o"
    result = await box.runtime.exec(spec(command, host_path=str(workspace)), T)
    assert result.stdout == f"{owner[0]}\nfrom the host", result.stderr
    assert result.exit_code == 0, result.stderr
    made = os.stat(workspace / "outbox" / "o")
    assert (made.st_uid, made.st_gid) == owner


async def test_the_memory_limit_holds(box: Box) -> None:
    if not box.candidate.limits:
        pytest.skip(f"the {box.candidate.id} backend enforces no limits")
    # A shell variable of 200 MB under a 64 MiB limit: the shell is killed.
    hog = "a=$(head -c 200000000 /dev/zero | tr '\\0' x); echo ${#a}"
    result = await box.runtime.exec(spec(hog, memory_mb=64), T)
    assert result.exit_code != 0
    assert "200000000" not in result.stdout
    after = await box.runtime.exec(spec("echo alive", memory_mb=64), T)
    assert after.stdout == "alive\n"


# ---------------------------------------------------------------- content-addressed mounts


def revisions(box: Box) -> Path:
    """Where the suite publishes skill revisions, as the host's skill store lays them out."""
    return Path(box.runtime.settings.state_dir).parent / "mounts" / "skills"


async def test_content_addressed_mounts_come_and_go_with_each_command(box: Box) -> None:
    """The released host's skill flow in one session: activate, add, new revision, drop."""
    root = revisions(box)
    a1 = publish_revision(root, {"SKILL.md": "alpha one\n", "run.sh": ("echo ran alpha\n", True)})
    b1 = publish_revision(root, {"SKILL.md": "beta one\n"})
    a2 = publish_revision(root, {"SKILL.md": "alpha two\n", "run.sh": ("echo ran alpha2\n", True)})
    first = await box.runtime.create_session(spec(""), T)

    async def run(command: str, *mounts: Revision) -> tuple[int | None, str]:
        extra = [m.mount() for m in mounts]
        result = await box.runtime.exec(spec(command, extra_mounts=extra), T)
        return result.exit_code, result.stdout

    def cat(revision: Revision) -> str:
        return f"cat {revision.path}/SKILL.md"

    # Activated: visible at its mount path, read-only, its executables executable.
    assert await run(cat(a1), a1) == (0, "alpha one\n")
    assert (await run(f"echo x > {a1.path}/SKILL.md", a1))[0] != 0
    assert (await run(f"echo x > {a1.path}/new.txt", a1))[0] != 0
    if box.candidate.dialect is SHELL:
        assert await run(f"{a1.path}/run.sh", a1) == (0, "ran alpha\n")
    # A second skill: both.
    assert await run(f"{cat(a1)}; {cat(b1)}", a1, b1) == (0, "alpha one\nbeta one\n")
    # A new revision of the first: the new one, and the old one is not there.
    assert await run(cat(a2), a2, b1) == (0, "alpha two\n")
    assert (await run(cat(a1), a2, b1))[0] != 0
    # Dropped: a command that brings none sees none; the session is the same throughout.
    assert (await run(cat(a2)))[0] != 0
    assert await run("echo plain") == (0, "plain\n")
    assert box.runtime.get_session("s1", T).backend_session_id == first.backend_session_id
    assert len(box.runtime.sessions(T)) == 1


async def test_a_content_addressed_mount_is_verified_against_its_manifest(box: Box) -> None:
    root = revisions(box)
    good = publish_revision(root, {"SKILL.md": "good\n"})
    other = publish_revision(root, {"SKILL.md": "other\n"})
    await box.runtime.create_session(spec(""), T)
    # A digest its manifest does not hash to (the other revision's manifest).
    forged = good.mount(manifest_path=str(other.manifest))
    with pytest.raises(BoxArtifactDigestError) as mismatch:
        await box.runtime.exec(spec(f"cat {good.path}/SKILL.md", extra_mounts=[forged]), T)
    assert mismatch.value.code == "box_artifact_digest_mismatch"
    assert mismatch.value.details["reason"] == "digest_mismatch"
    # A package whose files changed after publication.
    changed = publish_revision(root, {"SKILL.md": "before\n"})
    (changed.package / "SKILL.md").chmod(0o644)
    (changed.package / "SKILL.md").write_text("after!\n")
    with pytest.raises(BoxArtifactRefusedError) as refused:
        await box.runtime.exec(spec("echo never", extra_mounts=[changed.mount()]), T)
    assert refused.value.code == "box_artifact_refused"
    assert refused.value.details["reason"] == "content_changed"
    # Neither was made visible, and the session goes on.
    ok = await box.runtime.exec(spec(f"cat {good.path}/SKILL.md", extra_mounts=[good.mount()]), T)
    assert (ok.exit_code, ok.stdout) == (0, "good\n")


async def test_a_managed_process_sees_the_artifacts_its_session_was_created_with(
    box: Box,
) -> None:
    revision = publish_revision(revisions(box), {"SKILL.md": "for the process\n"})
    created = spec("", "mcp", extra_mounts=[revision.mount()])
    await box.runtime.create_session(created, T)
    program = box.candidate.dialect.cat_program(f"{revision.path}/SKILL.md")
    process_spec = ManagedProcessSpec(process_id="p1", command=program[0], args=list(program[1:]))
    process, _ = await box.runtime.start_managed_process("mcp", process_spec, T)
    with anyio.fail_after(PATIENCE):
        assert await process.outbox.get() == "for the process"
    # A command of the session that brings no mounts while the process runs does not
    # take the process's away: it reads the file again for each line it gets.
    assert (await box.runtime.exec(spec("echo plain", "mcp"), T)).stdout == "plain\n"
    line = b"again\n"
    await process.inbox.put(line, len(line))
    with anyio.fail_after(PATIENCE):
        assert await process.outbox.get() == "for the process"
    await box.runtime.stop_managed_process("mcp", "p1", T)
