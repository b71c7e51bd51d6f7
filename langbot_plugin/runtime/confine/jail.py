"""The nsjail command line of a confined worker (pure: nothing is read from the machine
but ``os.path.exists``).

``nsjail -Mo``: the worker is PID 1 of its own pid, mount, ipc, uts and cgroup
namespaces, on an empty tmpfs root with the system folders, the interpreter's paths,
the plugin and its dependency environment read-only, its data folder (``HOME``)
read-write, and tmpfs ``/tmp`` and ``/dev/shm`` (docs/security.md). stdio passes
through: it is the worker's link. As root it runs as :attr:`JailPlan.uid` with
``no_new_privs``, else in a user namespace of its own; the network is ``host`` or
loopback only (``none``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePath

from langbot_plugin.nsjail_common import NETWORK_RO_MOUNTS, SYSTEM_RO_MOUNTS
from langbot_plugin.runtime.confine.options import Network, WorkerLimits

__all__ = ["EXTRA_RO_MOUNTS", "JailPlan", "nsjail_args", "python_paths", "system_paths"]

#: Files of /etc a plugin process commonly reads, beyond the Box's list.
EXTRA_RO_MOUNTS = (
    "/etc/pki",
    "/etc/services",
    "/etc/protocols",
    "/etc/mime.types",
    "/etc/host.conf",
    "/etc/gai.conf",
)
#: Folders never mounted whole, even if the interpreter's paths name them.
_TOO_BROAD = frozenset({"/", "/home", "/root", "/etc", "/proc", "/sys", "/dev", "/run", "/var"})


def system_paths(network: Network) -> list[str]:
    """The system folders and files of this machine a worker's jail mounts read-only."""
    chosen = [*SYSTEM_RO_MOUNTS, *EXTRA_RO_MOUNTS]
    if network == "host":
        chosen += NETWORK_RO_MOUNTS
    return [p for p in chosen if os.path.exists(p)]


def python_paths() -> list[str]:
    """The interpreter's folders and every folder it imports from (this process's
    ``sys.path`` without its first entry, the script's folder or the working
    directory), without those inside another one."""
    entries = sys.path if sys.flags.safe_path else sys.path[1:]
    found = {
        os.path.realpath(p)
        for p in (sys.base_prefix, sys.prefix, sys.base_exec_prefix, sys.exec_prefix, *entries)
        if p
    }
    found.add(os.path.dirname(os.path.realpath(sys.executable)))
    kept = sorted(p for p in found if os.path.exists(p) and p not in _TOO_BROAD)
    return [p for p in kept if not any(p != q and p.startswith(q.rstrip("/") + "/") for q in kept)]


@dataclass(frozen=True)
class JailPlan:
    """Everything one jail needs; :func:`nsjail_args` turns it into a command line."""

    binary: str
    #: root: run as this user id, no user namespace; None: a user namespace, our own uid
    uid: int | None
    network: Network
    limits: WorkerLimits
    read_only: Sequence[str]
    writable: Sequence[str]
    cwd: str
    #: folders to cover with an empty tmpfs (the runtime's data folder)
    hidden: Sequence[str] = ()
    #: the cgroup holds memory and processes (else rlimits do what they can)
    cgroup_memory: bool = False
    cgroup_pids: bool = False
    extra: Sequence[str] = field(default_factory=tuple[str, ...])


def _mounts(plan: JailPlan) -> list[str]:
    points: list[tuple[tuple[str, ...], int, list[str]]] = []
    for order, (flag, paths) in enumerate(
        (("-R", plan.read_only), ("-T", plan.hidden), ("-B", plan.writable))
    ):
        for path in paths:
            if ":" in path:
                raise ValueError(f"a path with ':' cannot be mounted into a jail: {path}")
            points.append((PurePath(path).parts, order, [flag, path]))
    for tmpfs in ("/tmp", "/dev/shm"):
        points.append((PurePath(tmpfs).parts, 1, ["-T", tmpfs]))
    # parents before children; at one path: read-only, then covers, then writable
    return [arg for _, _, args in sorted(points) for arg in args]


def nsjail_args(plan: JailPlan, command: Sequence[str]) -> list[str]:
    """``nsjail ... -- command``: the worker's jail (see the module docstring)."""
    limits = plan.limits
    args = [plan.binary, "-Mo", "--quiet", "--hostname", "plugin", "--cwd", plan.cwd]
    if plan.uid is not None:
        args += ["--disable_clone_newuser", "-u", str(plan.uid), "-g", str(plan.uid)]
    if plan.network == "host":
        args.append("--disable_clone_newnet")
    args += ["--time_limit", "0", "--rlimit_cpu", "inf", "--rlimit_fsize", "inf"]
    args += ["--rlimit_stack", "soft", "--nice_level", "0", "--keep_env"]
    args += ["--rlimit_nofile", str(limits.open_files) if limits.open_files else "hard"]
    memory = plan.cgroup_memory or not limits.memory_mb
    args += ["--rlimit_as", "inf" if memory else str(limits.memory_mb)]
    pids = plan.cgroup_pids or not limits.pids
    args += ["--rlimit_nproc", "soft" if pids else str(limits.pids)]
    args += [*plan.extra, *_mounts(plan), "--", *command]
    return args
