"""Sandbox backends behind one interface, each registered once: :data:`BACKENDS`.

A backend is its file in this folder (a :class:`~.base.SandboxBackend` named as its
``box.backend`` value) plus one :class:`Registered` line: that name, the model of its
``box.<name>`` section, its class (both ``"module:attribute"`` below ``box_runtime``,
imported when first needed: the model at every validation, the class, with its SDK,
only by a Box that uses it), and whether ``box.backend: local`` probes it (in order).
The configuration's sections, ``lbp box --backend``, the settings that call for a new
selection and (a test holds them equal) the conformance candidates follow this table.

:func:`select_backend` chooses as docs/box.md, *Backends*, says; :class:`Selection`
keeps why each candidate before the chosen one was skipped. Tests substitute factories
(the :class:`~.fake.FakeBackend`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel

    from box_runtime.backends.base import SandboxBackend
    from box_runtime.config import BoxConfig

__all__ = [
    "BACKENDS",
    "LOCAL_ORDER",
    "NAMES",
    "BackendFactory",
    "Registered",
    "Selection",
    "default_factories",
    "select_backend",
]

BackendFactory = Callable[["BoxConfig"], "SandboxBackend"]


def _load(reference: str) -> Any:
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(f"box_runtime.{module}"), attribute)


@dataclass(frozen=True, slots=True)
class Registered:
    """One backend: its name, its section's model and its class (module docstring)."""

    name: str
    config: str
    backend: str
    #: ``box.backend: local`` probes it.
    local: bool = False

    def config_model(self) -> type[BaseModel]:
        return _load(self.config)

    def backend_class(self) -> type[SandboxBackend]:
        return _load(self.backend)

    def create(self, config: BoxConfig) -> SandboxBackend:
        """The backend, built from its section of ``config``."""
        return self.backend_class().from_config(config.section(self.name), config)


BACKENDS = (
    Registered("docker", "config:DockerConfig", "backends.docker:DockerBackend", local=True),
    Registered("podman", "config:PodmanConfig", "backends.podman:PodmanBackend", local=True),
    Registered("nsjail", "config:NsjailConfig", "backends.nsjail:NsjailBackend", local=True),
    Registered("e2b", "config:E2BConfig", "backends.e2b:E2BBackend"),
    Registered("host", "config:HostConfig", "backends.host:HostBackend"),
)
#: Every registered backend's name.
NAMES = tuple(backend.name for backend in BACKENDS)
#: The order ``box.backend: local`` probes in.
LOCAL_ORDER = tuple(backend.name for backend in BACKENDS if backend.local)


def default_factories() -> dict[str, BackendFactory]:
    """Each registered backend's factory, by name (tests substitute their own)."""
    return {backend.name: backend.create for backend in BACKENDS}


@dataclass(slots=True)
class Selection:
    """The chosen backend (or ``None``) and, per candidate, why it was not usable."""

    backend: SandboxBackend | None
    requested: str
    reasons: dict[str, str]

    @property
    def reason(self) -> str:
        if self.backend is not None:
            return ""
        return "; ".join(f"{name}: {why}" for name, why in self.reasons.items()) or (
            f"no backend named {self.requested!r}"
        )

    def describe(self, serves: str = "using {name}") -> str:
        """One line for the log: what was asked for, what serves (``serves``, formatted
        with the backend's ``name``), and what was skipped and why."""
        if self.backend is None:
            return f"box.backend {self.requested}: no usable backend ({self.reason})"
        line = f"box.backend {self.requested}: {serves.format(name=self.backend.name)}"
        if self.reasons:
            skipped = "; ".join(f"{name} skipped: {why}" for name, why in self.reasons.items())
            line += f" ({skipped})"
        return line


async def select_backend(
    config: BoxConfig,
    factories: Mapping[str, BackendFactory],
    *,
    listen_host: str | None = None,
) -> Selection:
    """Create and probe candidates in order; return the first usable backend.

    ``listen_host``: the address the Box serves on (the ``host`` backend refuses any
    but loopback); ``None`` for a Box that does not listen.
    """
    from box_runtime.backends.host_policy import check_host_backend
    from box_runtime.errors import BoxHostBackendRefusedError

    requested = config.backend
    reasons: dict[str, str] = {}
    if requested == "host":
        try:
            check_host_backend(config, listen_host)
        except BoxHostBackendRefusedError as exc:
            reasons[requested] = exc.message
            return Selection(None, requested, reasons)
    candidates = LOCAL_ORDER if requested == "local" else (requested,)
    for name in candidates:
        factory = factories.get(name)
        if factory is None:
            reasons[name] = "not available in this build"
            continue
        try:
            backend = factory(config)
            why = await backend.probe()
        except Exception as exc:  # a probe must never take the runtime down
            reasons[name] = f"probe failed: {exc}"
            continue
        if why is None:
            return Selection(backend, requested, reasons)
        reasons[name] = why
        await backend.aclose()
    return Selection(None, requested, reasons)
