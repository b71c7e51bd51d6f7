"""A cgroup of its own per plugin worker: its limits, and what the kernel did at them.

The runtime makes ``lbp-rt-workers/<runtime pid>-<worker>`` below the cgroup it runs in
(cgroup v2: one directory; v1: one in each of the ``memory``, ``pids`` and ``cpu``
hierarchies), writes the worker's limits there, and the worker's launcher joins it
before it starts the jail (:attr:`WorkerCgroup.procs`), so the jail and everything in
it are counted together. The cgroup is ours, not nsjail's: its counters outlive the
worker, so after an exit the runtime reads whether the kernel ended it at its memory
limit (``oom_kill``) and how many process starts it refused (``pids.events``).

:func:`detect` tells which hierarchy is usable (root, or a delegated v2 subtree); where
none is, workers get rlimits instead (:mod:`.jail`) and the reason is logged.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Literal

from langbot_plugin.nsjail_common import own_cgroups
from langbot_plugin.runtime.confine.options import WorkerLimits

__all__ = ["CgroupSupport", "Counters", "WorkerCgroup", "detect"]

ROOT = "/sys/fs/cgroup"
PARENT = "lbp-rt-workers"
_V1 = ("memory", "pids", "cpu")
_CPU_PERIOD_US = 100_000


@dataclass(frozen=True, slots=True)
class Counters:
    oom_kills: int = 0
    refused_forks: int = 0


def _write(path: str, value: str) -> None:
    with open(path, "w", encoding="ascii") as file:
        file.write(value)


def _field(path: str, name: str) -> int:
    """The value of ``name`` in a flat-keyed cgroup file (``memory.events``...)."""
    try:
        with open(path, encoding="ascii") as file:
            for line in file:
                key, _, value = line.partition(" ")
                if key == name:
                    return int(value)
    except (OSError, ValueError):
        pass
    return 0


@dataclass(frozen=True, slots=True)
class WorkerCgroup:
    """The cgroup directories of one worker (one for v2, one per controller for v1)."""

    version: Literal["v1", "v2"]
    #: controller ("" for v2) -> directory
    dirs: dict[str, str]

    @property
    def procs(self) -> list[str]:
        """The files a launcher writes its pid into, to join."""
        return [os.path.join(d, "cgroup.procs") for d in self.dirs.values()]

    def _dir(self, controller: str) -> str | None:
        return self.dirs.get("" if self.version == "v2" else controller)

    def apply(self, limits: WorkerLimits) -> None:
        """Write ``limits`` (``0`` leaves that one unlimited); raises :class:`OSError`."""
        memory = str(limits.memory_mb * 1024 * 1024) if limits.memory_mb else None
        quota = int(limits.cpus * _CPU_PERIOD_US) if limits.cpus else None
        mem, pids, cpu = self._dir("memory"), self._dir("pids"), self._dir("cpu")
        if self.version == "v2":
            assert mem is not None
            _write(os.path.join(mem, "memory.max"), memory or "max")
            swap = os.path.join(mem, "memory.swap.max")
            if os.path.exists(swap):
                _write(swap, "0" if memory else "max")
            _write(os.path.join(mem, "pids.max"), str(limits.pids or "max"))
            _write(os.path.join(mem, "cpu.max"), f"{quota or 'max'} {_CPU_PERIOD_US}")
            return
        if mem is not None:
            limit = os.path.join(mem, "memory.limit_in_bytes")
            memsw = os.path.join(mem, "memory.memsw.limit_in_bytes")
            value = memory or "-1"
            has_memsw = os.path.exists(memsw)
            # memory+swap may never be below memory: raise memsw first when unlimiting
            if has_memsw and value == "-1":
                _write(memsw, value)
            _write(limit, value)
            if has_memsw and value != "-1":
                _write(memsw, value)
        if pids is not None:
            _write(os.path.join(pids, "pids.max"), str(limits.pids or "max"))
        if cpu is not None:
            _write(os.path.join(cpu, "cpu.cfs_period_us"), str(_CPU_PERIOD_US))
            _write(os.path.join(cpu, "cpu.cfs_quota_us"), str(quota or -1))

    def counters(self) -> Counters:
        mem, pids = self._dir("memory"), self._dir("pids")
        oom = 0
        if mem is not None:
            events = "memory.events" if self.version == "v2" else "memory.oom_control"
            oom = _field(os.path.join(mem, events), "oom_kill")
        refused = _field(os.path.join(pids, "pids.events"), "max") if pids is not None else 0
        return Counters(oom, refused)

    def remove(self) -> bool:
        """Remove the directories (they must be empty); ``False`` if one is still busy."""
        removed = True
        for directory in self.dirs.values():
            try:
                os.rmdir(directory)
            except FileNotFoundError:
                pass
            except OSError:
                removed = False
        return removed


@dataclass(frozen=True, slots=True)
class CgroupSupport:
    """Where workers' cgroups go, or why they cannot have any."""

    version: Literal["v1", "v2", "none"]
    #: controller ("" for v2) -> the parent directory of the workers' cgroups
    parents: dict[str, str]
    reason: str = ""

    def create(self, name: str, limits: WorkerLimits) -> WorkerCgroup:
        """The cgroup ``name`` (made, or reused if a busy one was left), with ``limits``."""
        assert self.version != "none"
        dirs = {c: os.path.join(parent, name) for c, parent in self.parents.items()}
        for directory in dirs.values():
            os.makedirs(directory, exist_ok=True)
        group = WorkerCgroup(self.version, dirs)
        try:
            group.apply(limits)
        except OSError:
            group.remove()
            raise
        return group

    def sweep(self) -> None:
        """Remove the empty cgroups runtimes that are gone left behind."""
        for parent in self.parents.values():
            with contextlib.suppress(OSError):
                for name in os.listdir(parent):
                    pid = name.split("-", 1)[0]
                    if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
                        with contextlib.suppress(OSError):
                            os.rmdir(os.path.join(parent, name))


def _trial(parent: str, limit_file: str) -> None:
    """Make a cgroup below ``parent`` and open its ``limit_file`` for writing, then
    remove it: raises :class:`OSError` where a worker's cgroup could not be set up."""
    trial = os.path.join(parent, f"{os.getpid()}-trial")
    os.makedirs(trial, exist_ok=True)
    try:
        with open(os.path.join(trial, limit_file), "a", encoding="ascii"):
            pass
    finally:
        os.rmdir(trial)


def _v2(own: dict[str, str]) -> CgroupSupport | None:
    if not os.path.exists(os.path.join(ROOT, "cgroup.controllers")):
        return None
    base = os.path.join(ROOT, own.get("", "/").lstrip("/"))
    parent = os.path.join(base, PARENT)
    try:
        os.makedirs(parent, exist_ok=True)
        # a cgroup with processes of its own cannot hand controllers down (the v2 rule):
        # this works where our cgroup is delegated to us and we are alone in it
        _write(os.path.join(base, "cgroup.subtree_control"), "+memory +pids +cpu")
        _write(os.path.join(parent, "cgroup.subtree_control"), "+memory +pids +cpu")
        _trial(parent, "memory.max")
    except OSError as exc:
        return CgroupSupport("none", {}, f"cgroup v2 is not delegated to us ({exc.strerror})")
    return CgroupSupport("v2", {"": parent})


def _v1(own: dict[str, str]) -> CgroupSupport | None:
    parents: dict[str, str] = {}
    problems: list[str] = []
    for controller in _V1:
        mount = os.path.join(ROOT, controller)
        if not os.path.exists(os.path.join(mount, "tasks")):
            continue
        parent = os.path.join(mount, own.get(controller, "/").lstrip("/"), PARENT)
        try:
            os.makedirs(parent, exist_ok=True)
            _trial(parent, "cgroup.procs")
        except OSError as exc:
            problems.append(f"{controller}: {exc.strerror}")
            continue
        parents[controller] = parent
    if "memory" not in parents or "pids" not in parents:
        if problems:
            return CgroupSupport("none", {}, "cgroup v1: " + "; ".join(problems))
        return None
    return CgroupSupport("v1", parents)


def detect() -> CgroupSupport:
    """Which cgroups workers can have here; never raises."""
    own = own_cgroups()
    v2 = _v2(own)
    if v2 is not None and v2.version == "v2":
        return v2
    v1 = _v1(own)
    if v1 is not None and v1.version == "v1":
        return v1
    chosen = v2 or v1
    return chosen or CgroupSupport("none", {}, "no cgroup hierarchy with memory and pids")
