"""nsjail and a workspace the host made: root-owned, mode 0755, created by the host.

The released host (LangBot 4.11.2, ``pkg/box/service.py``) passes its tenant workspace
as ``host_path`` after ``os.makedirs(tenant_workspace, exist_ok=True)`` as root. The
jail runs as uid 65534; it must write there without the directory being opened to
anyone else, and removing the session must never touch the host's files.
"""

from __future__ import annotations

import os
import stat
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from box_runtime.export_session import read_session_files, write_session_files
from box_runtime.models import BoxSpec
from box_runtime.mounts import bind_idmapped, detach, mounts_below
from box_runtime.runtime import BoxRuntime
from box_runtime.session_dirs import write_marker
from box_runtime.sessions import SessionKey, Tenant

from .helpers import jail_state, require_nsjail

pytestmark = pytest.mark.anyio
T = Tenant("inst-1", "ws-1", 1)


@pytest.fixture
def state() -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("the jail runs as another user only under a root Box")
    scratch = jail_state("lbp-nsjail-hostws-")
    root = next(scratch)
    try:
        yield root
    finally:  # a failed test may leave a mount: never delete through it
        for point in mounts_below(str(root)):
            detach(point)
        scratch.close()


def config(state: Path, deployment: str = "hostws") -> dict[str, Any]:
    return {
        "backend": "nsjail",
        "deployment_id": deployment,
        "state_dir": str(state / "state"),
        "local": {"allowed_mount_roots": [str(state / "mounts")]},
    }


@pytest.fixture
async def runtime(state: Path) -> AsyncGenerator[BoxRuntime]:
    require_nsjail()
    box = BoxRuntime(config=config(state), environ={}, cwd=str(state))
    async with box.running():
        yield box


def host_workspace(state: Path) -> Path:
    """The tenant workspace exactly as the host makes it (as root, umask 022)."""
    workspace = state / "mounts" / "box" / "default" / "tenants" / "ws-0123456789abcdef01234567"
    old = os.umask(0o022)
    try:
        os.makedirs(workspace, exist_ok=True)
    finally:
        os.umask(old)
    (workspace / "host.txt").write_text("from the host\n")
    return workspace


def spec(cmd: str, workspace: Path, **fields: Any) -> BoxSpec:
    return BoxSpec.model_validate(
        {"session_id": "s1", "cmd": cmd, "host_path": str(workspace), **fields}
    )


async def test_the_jail_writes_a_root_owned_workspace_without_opening_it(
    runtime: BoxRuntime, state: Path
) -> None:
    workspace = host_workspace(state)
    before = workspace.stat()
    assert (before.st_uid, before.st_gid, stat.S_IMODE(before.st_mode)) == (0, 0, 0o755)
    command = (
        "echo x > /workspace/turn1.txt && cat /workspace/turn1.txt && "
        "echo more >> /workspace/host.txt && mkdir -p /workspace/sub/deeper && id -u"
    )
    result = await runtime.exec(spec(command, workspace), T)
    assert (result.exit_code, result.stdout, result.stderr) == (0, "x\n65534\n", "")
    # On the host: the host's owner and modes, nothing opened to others.
    after = workspace.stat()
    assert (after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode)) == (0, 0, 0o755)
    for path in (workspace / "turn1.txt", workspace / "sub" / "deeper"):
        info = path.stat()
        assert (info.st_uid, info.st_gid) == (0, 0)
        assert not info.st_mode & stat.S_IWOTH
    assert (workspace / "host.txt").read_text() == "from the host\nmore\n"
    # A later command reads what the first wrote.
    again = await runtime.exec(spec("cat /workspace/turn1.txt /workspace/host.txt", workspace), T)
    assert again.stdout == "x\nfrom the host\nmore\n"


async def test_imported_and_exported_files_go_through_the_jails_view(
    runtime: BoxRuntime, state: Path
) -> None:
    workspace = host_workspace(state)
    await runtime.create_session(spec("", workspace), T)
    session = runtime.existing("s1", T)
    backend = await runtime.backend()
    paths = await write_session_files(
        backend, session, "/workspace/inbox/q1", [("in.txt", b"imported\n")], clock=runtime.clock
    )
    assert paths == ["/workspace/inbox/q1/in.txt"]
    # The jail may change what was imported for it, and its result can be exported.
    command = "echo changed >> /workspace/inbox/q1/in.txt && cp /workspace/inbox/q1/in.txt /workspace/out.txt"
    assert (await runtime.exec(spec(command, workspace), T)).exit_code == 0
    files, _ = await read_session_files(
        backend, session, ["/workspace/out.txt"], run_id=None, clock=runtime.clock
    )
    assert [f.data for f in files] == [b"imported\nchanged\n"]
    info = (workspace / "inbox" / "q1" / "in.txt").stat()
    assert (info.st_uid, info.st_gid) == (0, 0)


async def test_removing_the_session_leaves_the_host_files_and_no_mount(
    runtime: BoxRuntime, state: Path
) -> None:
    workspace = host_workspace(state)
    assert (
        await runtime.exec(spec("echo kept > /workspace/kept.txt", workspace), T)
    ).exit_code == 0
    assert mounts_below(str(state)) != []
    await runtime.delete_session("s1", T)
    assert mounts_below(str(state)) == []
    assert (workspace / "kept.txt").read_text() == "kept\n"
    assert (workspace / "host.txt").read_text() == "from the host\n"


async def test_a_mount_a_dead_box_left_is_undone_without_touching_the_host_files(
    state: Path,
) -> None:
    require_nsjail()
    workspace = host_workspace(state)
    # What a Box killed mid-session leaves: a marked session directory with the idmapped
    # mount of the host's workspace in it.
    session_dir = state / "state" / "sessions" / SessionKey(T, "s1").digest
    (session_dir / "host-workspace").mkdir(parents=True)
    write_marker(
        str(session_dir),
        deployment_id="hostws",
        session_id="s1",
        workspace_uuid="ws-1",
        persistent=False,
    )
    await anyio.to_thread.run_sync(
        lambda: bind_idmapped(
            str(workspace), str(session_dir / "host-workspace"), owner=(0, 0), jail=(65534, 65534)
        )
    )
    assert mounts_below(str(state)) == [str(session_dir / "host-workspace")]
    box = BoxRuntime(config=config(state), environ={}, cwd=str(state))
    async with box.running():
        await box.backend()  # the first selection sweeps this deployment's leftovers
    assert mounts_below(str(state)) == []
    assert not session_dir.exists()
    assert (workspace / "host.txt").read_text() == "from the host\n"
