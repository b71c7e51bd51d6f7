"""Where nsjail puts its per-jail cgroups, on cgroup v2 or v1, and the flags that say so.

nsjail creates one cgroup per jail under a *parent* we prepare once:

* cgroup v2 (``/sys/fs/cgroup/cgroup.controllers`` exists): a delegated directory
  whose ``cgroup.subtree_control`` enables ``memory``, ``pids`` and ``cpu``, given by
  ``box.nsjail.cgroupv2_parent`` or created as ``<our cgroup>/lbp-box-jails``;
* cgroup v1 (``/sys/fs/cgroup/memory`` and friends): ``lbp-box-jails`` below our own
  cgroup in each controller hierarchy, so jails stay accounted under this process;
* neither (or no permission): no cgroups; the backend falls back to rlimits.

:func:`detect` does the filesystem work once; :meth:`CgroupPlan.flags` is pure.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal

from langbot_plugin.nsjail_common import own_cgroups

__all__ = ["CgroupPlan", "detect"]

CGROUP_ROOT = "/sys/fs/cgroup"
JAILS_DIR = "lbp-box-jails"
_V1_CONTROLLERS = ("memory", "pids", "cpu")


@dataclass(frozen=True, slots=True)
class CgroupPlan:
    mode: Literal["v2", "v1", "none"]
    #: v2: the delegated parent directory.
    v2_parent: str = ""
    #: v1: controller -> (mount point, parent path relative to it).
    v1: dict[str, tuple[str, str]] = field(default_factory=dict[str, tuple[str, str]])
    #: v1: whether memory+swap can be capped too.
    v1_memsw: bool = False
    #: Why cgroups are not used (mode "none"), for backend info and logs.
    reason: str = ""

    @property
    def limits_memory(self) -> bool:
        return self.mode == "v2" or "memory" in self.v1

    @property
    def limits_pids(self) -> bool:
        return self.mode == "v2" or "pids" in self.v1

    def flags(self, *, memory_mb: int, pids_limit: int, cpus: float) -> list[str]:
        memory = str(memory_mb * 1024 * 1024)
        cpu_ms = str(max(1, min(1000 * (os.cpu_count() or 1), int(cpus * 1000))))
        if self.mode == "v2":
            return [
                "--use_cgroupv2",
                "--cgroupv2_mount",
                self.v2_parent,
                "--cgroup_mem_max",
                memory,
                "--cgroup_pids_max",
                str(pids_limit),
                "--cgroup_cpu_ms_per_sec",
                cpu_ms,
            ]
        flags: list[str] = []
        values = {
            "memory": ("mem", memory),
            "pids": ("pids", str(pids_limit)),
            "cpu": ("cpu", cpu_ms),
        }
        for controller, (mount, parent) in self.v1.items():
            short, value = values[controller]
            limit_flag = (
                "--cgroup_cpu_ms_per_sec" if controller == "cpu" else f"--cgroup_{short}_max"
            )
            flags += [
                limit_flag,
                value,
                f"--cgroup_{short}_mount",
                mount,
                f"--cgroup_{short}_parent",
                parent,
            ]
            if controller == "memory" and self.v1_memsw:
                flags += ["--cgroup_mem_memsw_max", memory]
        return flags


def _enable_controllers(directory: str) -> None:
    with open(os.path.join(directory, "cgroup.subtree_control"), "w", encoding="ascii") as control:
        control.write("+memory +pids +cpu")


def _detect_v2(parent: str, own: dict[str, str]) -> CgroupPlan | None:
    if not os.path.exists(os.path.join(CGROUP_ROOT, "cgroup.controllers")):
        return None
    if not parent:
        base = os.path.join(CGROUP_ROOT, own.get("", "/").lstrip("/"))
        parent = os.path.join(base, JAILS_DIR)
        try:
            os.makedirs(parent, exist_ok=True)
            _enable_controllers(base)
        except OSError as exc:
            return CgroupPlan("none", reason=f"cgroup v2 is not delegated to us ({exc.strerror})")
    try:
        _enable_controllers(parent)
    except OSError as exc:
        return CgroupPlan("none", reason=f"cannot enable controllers in {parent} ({exc.strerror})")
    return CgroupPlan("v2", v2_parent=parent)


def _detect_v1(own: dict[str, str]) -> CgroupPlan | None:
    controllers: dict[str, tuple[str, str]] = {}
    problems: list[str] = []
    for controller in _V1_CONTROLLERS:
        mount = os.path.join(CGROUP_ROOT, controller)
        if not os.path.isdir(mount) or not os.path.exists(os.path.join(mount, "tasks")):
            continue
        relative = os.path.join(own.get(controller, "/").lstrip("/"), JAILS_DIR)
        try:
            os.makedirs(os.path.join(mount, relative), exist_ok=True)
        except OSError as exc:
            problems.append(f"{controller}: {exc.strerror}")
            continue
        controllers[controller] = (mount, relative)
    if not controllers:
        if problems:
            return CgroupPlan("none", reason="cgroup v1: " + "; ".join(problems))
        return None
    memsw = "memory" in controllers and os.path.exists(
        os.path.join(controllers["memory"][0], "memory.memsw.limit_in_bytes")
    )
    return CgroupPlan("v1", v1=controllers, v1_memsw=memsw)


def detect(mode: Literal["auto", "v2", "v1", "off"], v2_parent: str = "") -> CgroupPlan:
    """Prepare the jails' parent cgroup(s) for ``mode``; never raises."""
    if mode == "off":
        return CgroupPlan("none", reason="disabled by box.nsjail.cgroup")
    own = own_cgroups()
    fallback: CgroupPlan | None = None
    if mode in ("auto", "v2"):
        plan = _detect_v2(v2_parent, own)
        if plan is not None and plan.mode == "v2":
            return plan
        fallback = plan
    if mode in ("auto", "v1"):
        plan = _detect_v1(own)
        if plan is not None and plan.mode == "v1":
            return plan
        fallback = fallback or plan
    return fallback or CgroupPlan("none", reason=f"no usable cgroup {mode} hierarchy")
