"""The ``host`` backend: commands as plain child processes of the Box. NOT a sandbox.

Chosen only explicitly (:mod:`.host_policy`). Each command runs as an unprivileged user,
in the session's own directories, with a scrubbed environment, resource limits set in
the child (:mod:`.host_child`) and a process group of its own; the session's sandbox
paths are rewritten to their real directories. What it guarantees and what it does not:
docs/box.md, *Host (NOT a sandbox)*.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import posixpath
import re
import shlex
import subprocess
from collections.abc import Callable, Mapping

import anyio
from anyio.abc import Process

from box_runtime.artifacts import Artifact
from box_runtime.backends.base import (
    ExecOutcome,
    ExecRequest,
    ProcessRequest,
    SandboxBackend,
    SandboxPlan,
    SpawnedProcess,
)
from box_runtime.backends.host_child import HostChild, Rlimits, start_child
from box_runtime.backends.host_policy import NOT_A_SANDBOX, HostIdentity, resolve_identity
from box_runtime.backends.local_exec import (
    WRAPPER,
    check_reachable,
    command_env,
    process_command,
    run_piped,
    spawn_piped,
)
from box_runtime.config import HostConfig
from box_runtime.errors import (
    BoxBackendUnavailableError,
    BoxSandboxGoneError,
    BoxValidationError,
)
from box_runtime.export import Identity, SandboxFiles

__all__ = ["HostBackend", "PathMap"]

logger = logging.getLogger("box_runtime.host")
_MIB = 1024 * 1024
_SHELL = "/bin/sh"


class PathMap:
    """A session's sandbox paths and their real directories (the longest path first),
    with one command's content-addressed mounts."""

    def __init__(self, plan: SandboxPlan, artifacts: tuple[Artifact, ...] = ()) -> None:
        pairs = {posixpath.normpath(m.sandbox_path): m.host_path for m in plan.mounts}
        pairs.update((a.sandbox_path, a.host_path) for a in artifacts)
        self.pairs = sorted(pairs.items(), key=lambda item: len(item[0]), reverse=True)
        self.own = (plan.session_dir, *(host for _, host in self.pairs))
        alternatives = "|".join(re.escape(path) for path, _ in self.pairs)
        # A sandbox path counts where a path starts (not inside a longer word or path)
        # and ends at a path boundary.
        self._pattern = re.compile(rf"(?<![\w./-])({alternatives})(?![\w.-])")

    def rewrite(self, text: str) -> str:
        mapped = dict(self.pairs)
        return self._pattern.sub(lambda match: mapped[match.group(1)], text)

    def directory(self, path: str) -> str:
        """The real directory of a working directory: a sandbox path or one of ours."""
        normalized = posixpath.normpath(path)
        for sandbox, host in self.pairs:
            if normalized == sandbox or normalized.startswith(f"{sandbox}/"):
                return host + normalized[len(sandbox) :]
        if any(normalized == own or normalized.startswith(f"{own}/") for own in self.own):
            return normalized
        raise BoxValidationError(
            f"workdir {path} is outside the session's directories; the host backend runs "
            f"commands only below {', '.join(sandbox for sandbox, _ in self.pairs)}"
        )


class HostBackend(SandboxBackend):
    """Unsandboxed child processes (see the module docstring)."""

    name = "host"
    custom_images = False
    unsandboxed_warning = NOT_A_SANDBOX

    def __init__(self, config: HostConfig) -> None:
        self._config = config
        self.identity: HostIdentity = resolve_identity(config)
        #: The uid each live session (by its directory) runs as.
        self._uids: dict[str, tuple[int | None, int | None]] = {}

    async def probe(self) -> str | None:
        if os.name != "posix" or not os.access(_SHELL, os.X_OK):
            return f"the host backend needs a POSIX system with {_SHELL}"
        return None

    # ------------------------------------------------------------------ sessions

    def _allocate(self, plan: SandboxPlan) -> tuple[int | None, int | None]:
        identity = self.identity
        uids = identity.uid_range
        if uids is None:
            return identity.uid, identity.gid
        taken = {uid for uid, _ in self._uids.values()}
        with contextlib.suppress(OSError):  # a persistent workspace keeps its uid
            owner = os.stat(plan.mounts[0].host_path).st_uid
            if owner in uids and owner not in taken:
                return owner, owner
        for uid in uids:
            if uid not in taken:
                return uid, uid
        raise BoxBackendUnavailableError(
            f"box.host.session_uids has no free uid left ({len(uids)} sessions use them all)"
        )

    async def start(self, plan: SandboxPlan) -> str:
        paths = PathMap(plan)
        for path in (*paths.own, plan.tmp_dir, plan.home_dir):
            if shlex.quote(path) != path:
                raise BoxValidationError(
                    f"the host backend needs shell-safe session paths; {path!r} is not "
                    "(choose a box.state_dir / mount path without spaces or quotes)"
                )
        uid, gid = self._allocate(plan)
        owned = [plan.tmp_dir, plan.home_dir]
        if plan.workspace_owned:
            owned.append(plan.mounts[0].host_path)

        def prepare() -> None:
            if uid is not None:
                for mount in plan.mounts:
                    check_reachable(mount.host_path, uid, "the host backend's user")
                check_reachable(plan.session_dir, uid, "the host backend's user")
            for path in owned:
                if uid is not None and gid is not None:
                    os.chown(path, uid, gid)
                os.chmod(path, 0o700)

        await anyio.to_thread.run_sync(prepare)
        self._uids[plan.session_dir] = (uid, gid)
        return plan.session_dir

    async def stop(self, plan: SandboxPlan, handle: str) -> None:
        uid, _ = self._uids.pop(handle, (None, None))
        if uid is not None and self.identity.uid_range is not None:
            await anyio.to_thread.run_sync(_kill_every_process_of, uid)

    def sandbox_files(self, plan: SandboxPlan, handle: str) -> SandboxFiles | None:
        files = super().sandbox_files(plan, handle)
        uid, gid = self._uids.get(handle, (None, None))
        if files is None or uid is None or gid is None:
            return files
        return SandboxFiles(files.roots, Identity(uid, frozenset({gid})))

    # ------------------------------------------------------------------ commands

    def _session(self, plan: SandboxPlan, handle: str) -> tuple[int | None, int | None]:
        found = self._uids.get(handle)
        if found is None or not os.path.isdir(plan.tmp_dir):
            raise BoxSandboxGoneError(f"the host session {handle} is gone")
        return found

    def _limits(self, plan: SandboxPlan, *, cpu_sec: int | None, memory_mb: int) -> Rlimits:
        file_bytes = self._config.rlimit_fsize_mb * _MIB
        if plan.max_file_bytes:
            file_bytes = min(file_bytes, plan.max_file_bytes)
        switches = self.identity.switches
        return Rlimits(
            cpu_sec=cpu_sec,
            address_space_bytes=memory_mb * _MIB if memory_mb else None,
            # RLIMIT_NPROC counts every process of the user: the Box's own user has more.
            nproc=plan.pids_limit if switches else None,
            file_bytes=file_bytes,
            nofile=self._config.rlimit_nofile,
        )

    def _starter(
        self, plan: SandboxPlan, handle: str, request: ExecRequest, limits: Rlimits
    ) -> Callable[[int, int, int], HostChild]:
        """Starts the request's command as the session's user, given its stdio."""
        uid, gid = self._session(plan, handle)
        paths = PathMap(plan, request.artifacts)
        workdir = paths.directory(request.workdir)
        variables: Mapping[str, str] = {
            "LANGBOT_BOX_WORKSPACE": plan.mounts[0].host_path,
            **{name: paths.rewrite(value) for name, value in request.env.items()},
        }
        env = command_env(home=plan.home_dir, tmp=plan.tmp_dir, env=variables)
        argv = [_SHELL, "-c", WRAPPER, "sh", workdir, paths.rewrite(request.command)]

        def start(stdin: int, stdout: int, stderr: int) -> HostChild:
            return start_child(
                argv,
                cwd=plan.mounts[0].host_path,
                env=env,
                uid=uid,
                gid=gid,
                limits=limits,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
            )

        return start

    async def exec(self, plan: SandboxPlan, handle: str, request: ExecRequest) -> ExecOutcome:
        cpu = min(self._config.max_time_limit_sec, math.ceil(request.timeout_sec) + 1)
        limits = self._limits(plan, cpu_sec=cpu, memory_mb=plan.memory_mb)
        done = await run_piped(self._starter(plan, handle, request, limits), request)
        return ExecOutcome(
            None if done.timed_out else done.code,
            done.timed_out,
            done.stdout.result(),
            done.stderr.result(),
        )

    async def spawn(
        self, plan: SandboxPlan, handle: str, request: ProcessRequest
    ) -> SpawnedProcess:
        """A managed process: a child with piped stdio, no CPU-seconds limit."""
        limits = self._limits(plan, cpu_sec=None, memory_mb=request.memory_mb or plan.memory_mb)
        start = self._starter(plan, handle, process_command(request), limits)

        async def started(stdin: int, stdout: int, stderr: int) -> Process:
            return start(stdin, stdout, stderr)

        return await spawn_piped(started)


def _kill_every_process_of(uid: int) -> None:
    """Kill every process of ``uid`` (a session's own), from a child running as it.

    ``kill(-1, SIGKILL)`` as that user reaches exactly its processes, also those that
    left the command's process group.
    """
    with contextlib.suppress(OSError):
        subprocess.run(
            [_SHELL, "-c", "kill -9 -1 2>/dev/null; exit 0"],
            user=uid,
            group=uid,
            extra_groups=[],
            env={"PATH": "/usr/bin:/bin"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
            timeout=10,
        )
    logger.debug("Box host: ended every process of uid %d", uid)
