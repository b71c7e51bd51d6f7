"""Sandbox backends behind one interface, each registered once: :data:`BACKENDS`.

A backend is its file in this folder (a :class:`~.base.SandboxBackend` whose ``name``
is its ``box.backend`` name) plus one :class:`Registered` line below: that name, the
model of its ``box.<name>`` configuration section, its class, and whether ``box.backend:
local`` probes it (in the table's order). The model and the class are named
``"module:attribute"`` below ``box_runtime`` and imported when first needed, so a Box
loads a backend's SDK only when it uses the backend; the model is imported whenever a
configuration is validated, so keep it where importing is cheap. Everything else that
names backends comes from this table: the configuration's sections
(:class:`~box_runtime.config.BoxConfig`), the settings that call for a new selection,
``lbp box --backend``, and the conformance suite's candidates (a test holds the two
equal). How one is chosen: :mod:`.selection`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
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
    "default_factories",
    "registered",
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


def registered(name: str) -> Registered:
    """The registered backend ``name`` (``KeyError`` for another name)."""
    for backend in BACKENDS:
        if backend.name == name:
            return backend
    raise KeyError(name)


def default_factories() -> dict[str, BackendFactory]:
    """Each registered backend's factory, by name (tests substitute their own)."""
    return {backend.name: backend.create for backend in BACKENDS}
