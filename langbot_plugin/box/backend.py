"""The reference's sandbox backend interface, as a face over :mod:`box_runtime.backends`.

A host subclasses :class:`BaseSandboxBackend` (``is_available``, ``start_session(spec)``,
``exec(session, spec)``, ``stop_session(session)``) to bring a backend of its own; in a
:class:`langbot_plugin.box.runtime.BoxRuntime` it serves through :class:`AdaptedBackend`,
which turns the runtime's :class:`~box_runtime.backends.base.SandboxPlan` and
``ExecRequest`` back into those calls. :class:`DockerBackend` and :class:`PodmanBackend`
name the Box's own backends; called directly, their session methods run through a
private :class:`box_runtime.runtime.BoxRuntime` of that one backend.

This module and the other runtime faces load the Box's daemon code, so nothing else in
:mod:`langbot_plugin.box` imports them (``tests/test_layering.py``); see docs/box.md,
*The in-process runtime at the reference's paths*.
"""

from __future__ import annotations

import abc
import contextlib
import logging
from collections.abc import Mapping
from typing import Any, ClassVar

from box_runtime.backends import default_factories
from box_runtime.backends.base import ExecOutcome, ExecRequest, SandboxBackend, SandboxPlan
from box_runtime.config import BoxConfig
from box_runtime.errors import (
    BoxError,
    BoxSandboxGoneError,
    BoxSessionNotFoundError,
    BoxValidationError,
)
from box_runtime.export import SandboxFiles
from box_runtime.models import (
    BoxExecutionResult,
    BoxExecutionStatus,
    BoxSessionInfo,
    BoxSpec,
)
from box_runtime.output import CollectedOutput, OutputCollector
from box_runtime.runtime import BoxRuntime as CoreRuntime
from box_runtime.sessions import SessionKey

__all__ = [
    "AdaptedBackend",
    "BaseSandboxBackend",
    "BuiltinSandboxBackend",
    "DockerBackend",
    "PodmanBackend",
    "core_backend",
]


class BaseSandboxBackend(abc.ABC):
    """A sandbox backend written against the reference's interface."""

    name: str
    instance_id: str = ""
    #: The reference's capability flags (kept for subclasses that read them).
    execution_scoped_mounts: bool = False
    content_addressed_mounts: bool = False

    def __init__(self, logger: logging.Logger) -> None:
        self.logger = logger

    async def initialize(self) -> None:  # noqa: B027 - an optional hook
        """Called before the runtime first asks :meth:`is_available`."""

    @abc.abstractmethod
    async def is_available(self) -> bool: ...

    @abc.abstractmethod
    async def start_session(self, spec: BoxSpec) -> BoxSessionInfo: ...

    @abc.abstractmethod
    async def exec(self, session: BoxSessionInfo, spec: BoxSpec) -> BoxExecutionResult: ...

    @abc.abstractmethod
    async def stop_session(self, session: BoxSessionInfo) -> None: ...

    async def is_session_alive(self, session: BoxSessionInfo) -> bool:
        del session
        return True

    async def get_readiness(
        self, *, workspace_path: str | None = None, strict: bool = False
    ) -> dict[str, Any]:
        """Availability; a generic backend claims none of the managed-mode isolation."""
        del workspace_path
        claim = False if strict else None
        return {
            "available": await self.is_available(),
            "cgroup_v2": claim,
            "namespace_isolation": claim,
            "mount_isolation": claim,
            "network_isolation": claim,
            "hard_workspace_quota": claim,
            "hard_read_only_mount_quota": claim,
            "bounded_ephemeral_storage": claim,
            "inode_quota": claim,
        }

    async def start_managed_process(self, session: BoxSessionInfo, spec: object) -> Any:
        del session, spec
        raise BoxError(f"{self.name} backend does not support managed processes")

    async def cleanup_orphaned_containers(self, current_instance_id: str = "") -> None:
        """Remove what earlier runs left behind (nothing by default)."""
        del current_instance_id


def _clip(text: str, truncated: bool, request: ExecRequest) -> CollectedOutput:
    collector = OutputCollector(request.output_limit, request.head_ratio)
    collector.feed(text.encode("utf-8"))
    kept = collector.result()
    return CollectedOutput(kept.text, kept.truncated or truncated, kept.total_bytes)


class AdaptedBackend(SandboxBackend):
    """A :class:`BaseSandboxBackend` subclass as the runtime's :class:`SandboxBackend`."""

    custom_images = True

    def __init__(self, face: BaseSandboxBackend) -> None:
        self.face = face
        self.name = face.name
        #: The reference's session of each sandbox handle.
        self._sessions: dict[str, BoxSessionInfo] = {}

    def _request(self, plan: SandboxPlan) -> BoxSpec:
        if plan.request is None:
            raise BoxValidationError(f"the {self.name} backend needs the session's request")
        contextless = plan.key_hash == SessionKey(None, plan.session_id).digest
        session_id = plan.session_id if contextless else plan.name
        return plan.request.model_copy(update={"session_id": session_id})

    async def probe(self) -> str | None:
        if await self.face.is_available():
            return None
        return f"the {self.name} backend reports itself unavailable"

    async def start(self, plan: SandboxPlan) -> str:
        self._sessions[plan.name] = await self.face.start_session(self._request(plan))
        return plan.name

    async def exec(self, plan: SandboxPlan, handle: str, request: ExecRequest) -> ExecOutcome:
        session = self._sessions.get(handle)
        if session is None:
            raise BoxSandboxGoneError(f"the {self.name} session {handle} is gone")
        spec = self._request(plan).model_copy(
            update={
                "cmd": request.command,
                "workdir": request.workdir,
                "env": dict(request.env),
                "timeout_sec": int(request.timeout_sec),
            }
        )
        result = await self.face.exec(session, spec)
        return ExecOutcome(
            exit_code=result.exit_code,
            timed_out=result.status is BoxExecutionStatus.TIMED_OUT,
            stdout=_clip(result.stdout, result.stdout_truncated, request),
            stderr=_clip(result.stderr, result.stderr_truncated, request),
        )

    async def stop(self, plan: SandboxPlan, handle: str) -> None:
        del plan
        session = self._sessions.pop(handle, None)
        if session is not None:
            await self.face.stop_session(session)

    async def cleanup_orphans(self, deployment_id: str) -> list[str]:
        self.face.instance_id = deployment_id
        await self.face.cleanup_orphaned_containers(deployment_id)
        return []

    def sandbox_files(self, plan: SandboxPlan, handle: str) -> SandboxFiles | None:
        del plan, handle
        return None  # the sandbox is the subclass's own: its files are not ours to read


class BuiltinSandboxBackend(BaseSandboxBackend):
    """One of the Box's own backends under the reference's class name."""

    #: The :func:`box_runtime.backends.default_factories` entry this face names.
    core_name: ClassVar[str]

    def __init__(self, logger: logging.Logger) -> None:
        super().__init__(logger)
        self.name = self.core_name
        #: The ``box.<name>`` section given to :meth:`configure`.
        self.section: dict[str, Any] = {}
        self._runtime: CoreRuntime | None = None

    def configure(self, config: Mapping[str, Any]) -> None:
        """Take the ``box.<name>`` configuration section (before first use)."""
        self.section = dict(config)

    def _core(self) -> CoreRuntime:
        if self._runtime is None:
            config: dict[str, Any] = {"backend": self.core_name}
            if self.section:
                config[self.core_name] = self.section
            self._runtime = CoreRuntime(config=config, mounts_checked_by_caller=True)
        return self._runtime

    async def is_available(self) -> bool:
        return (await self._core().backend_info()).available

    async def start_session(self, spec: BoxSpec) -> BoxSessionInfo:
        return await self._core().create_session(spec, None)

    async def exec(self, session: BoxSessionInfo, spec: BoxSpec) -> BoxExecutionResult:
        return await self._core().exec(
            spec.model_copy(update={"session_id": session.session_id}), None
        )

    async def stop_session(self, session: BoxSessionInfo) -> None:
        with contextlib.suppress(BoxSessionNotFoundError):
            await self._core().delete_session(session.session_id, None)


class DockerBackend(BuiltinSandboxBackend):
    """The Docker backend (:mod:`box_runtime.backends.docker`)."""

    core_name = "docker"
    name = "docker"


class PodmanBackend(BuiltinSandboxBackend):
    """The Podman backend (:mod:`box_runtime.backends.podman`)."""

    core_name = "podman"
    name = "podman"


def core_backend(face: BaseSandboxBackend, config: BoxConfig) -> SandboxBackend:
    """The runtime backend that serves ``face``: the Box's own one, or an adapter."""
    if isinstance(face, BuiltinSandboxBackend):
        return default_factories()[face.core_name](config)
    return AdaptedBackend(face)
