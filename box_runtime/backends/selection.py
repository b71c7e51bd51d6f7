"""How the runtime picks a backend of the registry (:mod:`box_runtime.backends`).

Selection: an explicit ``box.backend`` wins; ``local`` probes the registered backends
marked ``local`` (Docker, then Podman's socket, then nsjail) and takes the first usable
one (E2B is never probed: an operator names it). :class:`Selection` keeps why each
candidate before the chosen one was skipped; the runtime logs it and reports it in
``box_get_backend_info``, ``box_status`` and ``/readyz``. ``host`` runs commands
unsandboxed: it is never probed, and serves only when :mod:`.host_policy` allows it
(``box.host.allow_unsandboxed: true``, a loopback-only Box, an unprivileged user).
Backends are created through factories so tests can substitute
:class:`~.fake.FakeBackend`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from box_runtime.backends import LOCAL_ORDER, BackendFactory
from box_runtime.backends.base import SandboxBackend
from box_runtime.backends.host_policy import check_host_backend
from box_runtime.config import BoxConfig
from box_runtime.errors import BoxHostBackendRefusedError

__all__ = ["Selection", "select_backend"]


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
