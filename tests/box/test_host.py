"""The unsandboxed ``host`` backend: its opt-in, its refusals and what it does guarantee.

What every backend does is in the conformance suite (``-k host``); these are the host
backend's own promises, each checked against real child processes as real users (the
Box here is root, as the backend needs to switch users).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import stat
import subprocess
from collections.abc import AsyncGenerator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from box_runtime.backends import LOCAL_ORDER, default_factories, select_backend
from box_runtime.backends.host_policy import resolve_identity
from box_runtime.child import BOX_COMMAND
from box_runtime.config import BoxConfig, HostConfig
from box_runtime.errors import (
    BoxBackendUnavailableError,
    BoxHostBackendRefusedError,
    BoxValidationError,
)
from box_runtime.models import BoxExecutionStatus, BoxSpec
from box_runtime.runtime import BoxRuntime
from box_runtime.server import ServerOptions, StartupError, serve
from box_runtime.sessions import Tenant
from langbot_plugin.rpc.processes import free_port
from tests.box.helpers import jail_state, require
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

T = Tenant("inst-1", "ws-1", 1)
SECRET_ENV = "LBP_HOST_TEST_SECRET"


@pytest.fixture
def state() -> Iterator[Path]:
    yield from jail_state("lbp-host-test-")


def uid_range() -> tuple[int, str]:
    """A uid range of this test's own (no other test's processes share its uids)."""
    base = 3_200_000 + secrets.randbelow(100_000) * 100
    return base, f"{base}-{base + 99}"


def config(state: Path, **host: Any) -> dict[str, Any]:
    return {
        "backend": "host",
        "deployment_id": "h" + secrets.token_hex(5),
        "state_dir": str(state / "state"),
        "local": {"allowed_mount_roots": [str(state / "mounts")]},
        "host": {"allow_unsandboxed": True, **host},
    }


@asynccontextmanager
async def host_box(
    state: Path, *, environ: dict[str, str] | None = None, **host: Any
) -> AsyncGenerator[BoxRuntime]:
    require("host")
    runtime = BoxRuntime(config=config(state, **host), environ=environ or {}, cwd=str(state))
    async with runtime.running():
        yield runtime


def spec(cmd: str, session_id: str = "s1", **fields: Any) -> BoxSpec:
    return BoxSpec.model_validate({"session_id": session_id, "cmd": cmd, **fields})


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody reaped yet counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as file:
            return file.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def reason_of(exc: pytest.ExceptionInfo[BoxHostBackendRefusedError]) -> object:
    return exc.value.details.get("reason")


# --------------------------------------------------------------------------- opt-in


async def test_box_init_refuses_the_host_backend_without_the_opt_in(state: Path) -> None:
    runtime = BoxRuntime(config={"state_dir": str(state / "state")}, environ={}, cwd=str(state))
    with pytest.raises(BoxHostBackendRefusedError) as refused:
        await runtime.configure({"backend": "host"})
    assert refused.value.code == "box_host_backend_refused"
    assert reason_of(refused) == "not_opted_in"
    assert "box.host.allow_unsandboxed" in refused.value.message
    assert runtime.config.backend == "local"  # nothing was applied


async def test_a_configured_host_backend_without_the_opt_in_is_not_selected(state: Path) -> None:
    settings = config(state)
    settings["host"] = {}
    runtime = BoxRuntime(config=settings, environ={}, cwd=str(state))
    async with runtime.running():
        info = await runtime.backend_info()
        assert (info.name, info.available) == (None, False)
        assert "allow_unsandboxed" in str(info.reason)
        with pytest.raises(BoxBackendUnavailableError):
            await runtime.exec(spec("true"), T)
    with pytest.raises(StartupError, match="box_host_backend_refused"):
        await serve(ServerOptions(port=0), runtime, handle_signals=False)


async def test_probing_never_picks_the_host_backend(state: Path) -> None:
    assert "host" not in LOCAL_ORDER
    box = BoxConfig.model_validate(
        {
            "backend": "local",
            "host": {"allow_unsandboxed": True},
            # Neither Docker, Podman nor nsjail can serve: only the host backend could.
            "docker": {"base_url": f"unix://{state}/no-such-docker.sock"},
            "podman": {"base_url": f"unix://{state}/no-such-podman.sock"},
            "nsjail": {"binary": str(state / "no-such-nsjail")},
        }
    )
    selection = await select_backend(box, default_factories(), listen_host="127.0.0.1")
    assert selection.backend is None
    assert set(selection.reasons) == {"docker", "podman", "nsjail"}


# --------------------------------------------------------------------------- refusals


async def test_a_box_listening_beyond_loopback_refuses_the_host_backend(state: Path) -> None:
    require("host")
    runtime = BoxRuntime(config=config(state), environ={}, cwd=str(state))
    options = ServerOptions(host="0.0.0.0", port=free_port(), token="t" * 40)
    with pytest.raises(StartupError, match="box_host_backend_refused") as refused:
        await serve(options, runtime, handle_signals=False)
    assert "0.0.0.0" in str(refused.value)
    # A Box already serving beyond loopback refuses it at box_init too.
    served = BoxRuntime(config={"state_dir": str(state / "s2")}, environ={}, cwd=str(state))
    served.settings.listen_host = "0.0.0.0"
    with pytest.raises(BoxHostBackendRefusedError) as at_init:
        await served.configure({"backend": "host", "host": {"allow_unsandboxed": True}})
    assert reason_of(at_init) == "beyond_loopback"


def test_lbp_box_refuses_the_host_backend_beyond_loopback(state: Path) -> None:
    require("host")
    env = {
        **os.environ,
        "LANGBOT_BOX_CONFIG": json.dumps(config(state)),
        "LANGBOT_BOX_CONTROL_TOKEN": "t" * 40,
    }
    command = [*BOX_COMMAND, "--host", "0.0.0.0"]
    result = subprocess.run(
        [*command, "--ws-control-port", str(free_port())],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "box_host_backend_refused" in result.stderr
    assert "loopback" in result.stderr


@pytest.mark.parametrize("user", ["root", "0", "0:0", "nobody:0"])
async def test_commands_never_run_as_root(state: Path, user: str) -> None:
    require("host")
    runtime = BoxRuntime(config={"state_dir": str(state / "state")}, environ={}, cwd=str(state))
    with pytest.raises(BoxHostBackendRefusedError) as refused:
        await runtime.configure(
            {"backend": "host", "host": {"allow_unsandboxed": True, "user": user}}
        )
    assert reason_of(refused) == "root_user"


def test_a_box_that_is_not_root_runs_as_itself_only_when_allowed() -> None:
    with pytest.raises(BoxHostBackendRefusedError) as refused:
        resolve_identity(HostConfig(user="nobody"), euid=4321)
    assert reason_of(refused) == "cannot_switch_user"
    assert "run_as_box_user" in refused.value.message
    itself = resolve_identity(HostConfig(user="nobody", run_as_box_user=True), euid=4321)
    assert (itself.uid, itself.switches) == (None, False)
    with pytest.raises(BoxHostBackendRefusedError):
        resolve_identity(HostConfig(session_uids="200000-200099"), euid=4321)


async def test_managed_admission_refuses_the_host_backend(state: Path) -> None:
    runtime = BoxRuntime(config={"state_dir": str(state / "state")}, environ={}, cwd=str(state))
    with pytest.raises(BoxHostBackendRefusedError) as refused:
        await runtime.configure(
            {
                "backend": "host",
                "host": {"allow_unsandboxed": True},
                "admission": {"required": True},
            }
        )
    assert reason_of(refused) == "managed"


# --------------------------------------------------------------------------- guarantees


async def test_it_says_loudly_that_it_is_not_a_sandbox(
    state: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="box_runtime"):
        async with host_box(state) as runtime:
            info = await runtime.backend_info()
    assert (info.name, info.available, info.unsafe_direct_execution) == ("host", True, True)
    assert "NOT a sandbox" in str(info.warning)
    assert any("NOT a sandbox" in record.getMessage() for record in caplog.records)


async def test_commands_run_as_the_configured_user_in_a_private_workspace(state: Path) -> None:
    uid = 3_100_000 + secrets.randbelow(100_000)
    async with host_box(state, user=f"{uid}:{uid}") as runtime:
        result = await runtime.exec(spec("id -u; id -g; id -G; pwd; umask"), T)
        (session,) = runtime.sessions(T)
        workspace = os.stat(session.workspace_dir)
    assert result.stdout == f"{uid}\n{uid}\n{uid}\n{session.workspace_dir}\n0077\n"
    assert (workspace.st_uid, stat.S_IMODE(workspace.st_mode)) == (uid, 0o700)


async def test_the_resource_limits_hold_in_the_command(state: Path) -> None:
    first, uids = uid_range()
    del first
    async with host_box(state, session_uids=uids, rlimit_fsize_mb=1) as runtime:
        # The CPU limit follows the timeout (timeout_sec + 1): ulimit -t checks it, the command
        # itself takes no time worth a window.
        limits = await runtime.exec(spec("ulimit -t; ulimit -n; ulimit -f", timeout_sec=5), T)
        # dash counts ``ulimit -f`` in 512-byte blocks: 1 MiB is 2048.
        assert limits.stdout == "6\n1024\n2048\n"
        big = await runtime.exec(spec("head -c 3000000 /dev/zero > big; echo $?; wc -c < big"), T)
        code, size = big.stdout.split()
        assert code != "0"
        assert int(size) <= 1024 * 1024
        forks = "i=0; while [ $i -lt 40 ]; do sleep 30 & i=$((i+1)); done"
        bomb = await runtime.exec(spec(forks, "s2", pids_limit=8), T)
        assert "fork" in bomb.stderr.lower()


async def test_the_box_environment_is_not_inherited(
    state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET_ENV, "hunter2")
    monkeypatch.setenv("LBP_HOST_TEST_SHARED", "on purpose")
    environ = dict(os.environ)
    async with host_box(state, environ=environ) as runtime:
        runtime.settings.apply({"env_passthrough": ["LBP_HOST_TEST_SHARED"]})
        result = await runtime.exec(spec("env", env={"ASKED": "yes"}), T)
    seen = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
    assert SECRET_ENV not in seen
    assert "hunter2" not in result.stdout
    assert (seen["ASKED"], seen["LBP_HOST_TEST_SHARED"]) == ("yes", "on purpose")
    assert seen["PATH"] == "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    assert set(seen) <= {
        "PATH", "HOME", "LANG", "TMPDIR", "PWD", "OLDPWD", "LANGBOT_BOX_WORKSPACE", "ASKED",
        "LBP_HOST_TEST_SHARED",
    }  # fmt: skip


async def test_a_timeout_kills_the_commands_grandchildren(state: Path) -> None:
    async with host_box(state) as runtime:
        grandchild = "sh -c 'sleep 300 & echo $! > /workspace/gc.pid; wait'"
        result = await runtime.exec(spec(grandchild, timeout_sec=1), T)
        assert result.status is BoxExecutionStatus.TIMED_OUT
        (session,) = runtime.sessions(T)
        pid = int(await anyio.Path(session.workspace_dir, "gc.pid").read_text())
        try:
            await wait_until(lambda: not alive(pid))
        finally:
            if alive(pid):
                os.kill(pid, 9)
        # A command that leaves a background process behind ends when its shell does.
        left = await runtime.exec(spec("sleep 300 & echo $!", timeout_sec=60), T)
        assert left.status is BoxExecutionStatus.COMPLETED
        await wait_until(lambda: not alive(int(left.stdout)))


async def test_a_delete_ends_what_left_the_process_group(state: Path) -> None:
    _, uids = uid_range()
    async with host_box(state, session_uids=uids) as runtime:
        # Wait (in the command) until the process leads a session of its own.
        escape = (
            "setsid sleep 300 >/dev/null 2>&1 & p=$!; "
            "while [ \"$(cut -d' ' -f6 /proc/$p/stat)\" != $p ]; do :; done; echo $p"
        )
        escaped = await runtime.exec(spec(escape, timeout_sec=30), T)
        pid = int(escaped.stdout)
        try:
            assert alive(pid)  # its own session: the group kill did not reach it
            await runtime.delete_session("s1", T)
            await wait_until(lambda: not alive(pid))
        finally:
            if alive(pid):
                os.kill(pid, 9)


async def test_sessions_cannot_read_each_others_directories(state: Path) -> None:
    first, uids = uid_range()
    async with host_box(state, session_uids=uids) as runtime:
        mine = await runtime.exec(spec("echo secret > /workspace/s; id -u", "one"), T)
        one = next(s for s in runtime.sessions(T) if s.key.session_id == "one")
        peek = f"id -u; ls {one.workspace_dir}; cat {one.workspace_dir}/s"
        other = await runtime.exec(spec(peek, "two"), T)
        two = next(s for s in runtime.sessions(T) if s.key.session_id == "two")
        info_one, info_two = os.stat(one.workspace_dir), os.stat(two.workspace_dir)
    uid_one, uid_two = int(mine.stdout), int(other.stdout.split()[0])
    assert uid_one != uid_two
    assert {uid_one, uid_two} <= set(range(first, first + 100))
    assert other.exit_code != 0
    assert "secret" not in other.stdout
    assert other.stderr.count("Permission denied") == 2  # neither listed nor read
    assert one.workspace_dir != two.workspace_dir
    assert (info_one.st_uid, info_two.st_uid) == (uid_one, uid_two)
    assert stat.S_IMODE(info_one.st_mode) == stat.S_IMODE(info_two.st_mode) == 0o700


async def test_a_workdir_outside_the_session_is_refused(state: Path) -> None:
    async with host_box(state) as runtime:
        with pytest.raises(BoxValidationError, match="outside the session"):
            await runtime.exec(spec("pwd", workdir="/etc"), T)
        inside = await runtime.exec(spec("pwd", workdir="/workspace/../workspace/x"), T)
        (session,) = runtime.sessions(T)
    assert inside.stdout == f"{session.workspace_dir}/x\n"


async def test_sandbox_paths_are_rewritten_where_a_path_starts(state: Path) -> None:
    async with host_box(state) as runtime:
        result = await runtime.exec(
            spec("echo /workspace/a x/workspace '/workspace' /workspaces", env={"W": "/workspace"}),
            T,
        )
        shown = await runtime.exec(
            spec('echo "$W" "$LANGBOT_BOX_WORKSPACE"', env={"W": "/workspace"}), T
        )
        (session,) = runtime.sessions(T)
    ws = session.workspace_dir
    assert result.stdout == f"{ws}/a x/workspace {ws} /workspaces\n"
    assert shown.stdout == f"{ws} {ws}\n"
