"""The scopes a host puts in an envelope's ``context``, and the runtime handshake models.

An :class:`ActionContext` names a fenced workspace (instance, workspace, placement
generation, optionally an installation); an :class:`InstallationBinding` is the full
authority of one installation revision (plus ``runtime_revision`` and the artifact's
SHA-256). The runtime reads the same fields with
:class:`langbot_plugin.protocol.scope.ActionScope`; these are the host's strict forms:
frozen, no extra fields, validated ids. The control-connection models
(:class:`RuntimeConfig`, :class:`PluginInstallationDesiredState`, the three request
models) are what the host sends in ``set_runtime_config`` and the installation actions.
"""

from __future__ import annotations

import json
import math
import re
from enum import StrEnum
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, TypeAdapter, field_validator, model_validator

__all__ = [
    "ActionContext",
    "ActionEnvelopeContext",
    "ApplyPluginInstallationRequest",
    "InstallationBinding",
    "PluginExecutionMode",
    "PluginInstallationDesiredState",
    "PluginWorkerPolicy",
    "PluginWorkerResourceOverrides",
    "ReconcilePluginInstallationsRequest",
    "RemovePluginInstallationRequest",
    "RuntimeConfig",
    "RuntimeIdentity",
    "parse_action_envelope_context",
]

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_FROZEN = ConfigDict(extra="forbid", frozen=True)


def _strict_int(value: Any, name: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer")
    return value


def _positive_number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a positive number")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be finite and greater than 0")
    return float(value)


def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive integer")
    return value


class PluginExecutionMode(StrEnum):
    """Where the control plane places an installation's code."""

    DEDICATED = "dedicated"
    SHARED_CERTIFIED = "shared-runtime-v1"


class RuntimeIdentity(BaseModel):
    """The instance a runtime serves, and this runtime's own id."""

    model_config = _FROZEN

    instance_uuid: str
    runtime_id: str

    @field_validator("instance_uuid", "runtime_id")
    @classmethod
    def _required(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value.strip()


_INT_LIMITS = (
    "max_memory_mb",
    "max_pids",
    "max_open_files",
    "max_file_size_mb",
)


class PluginWorkerResourceOverrides(BaseModel):
    """Per-mode limits that replace the instance policy's (shared profile only)."""

    model_config = _FROZEN

    max_cpus: float | None = None
    max_memory_mb: int | None = None
    max_pids: int | None = None
    max_open_files: int | None = None
    max_file_size_mb: int | None = None

    @field_validator("max_cpus", mode="before")
    @classmethod
    def _cpus(cls, value: Any) -> Any:
        return None if value is None else _positive_number(value, "max_cpus")

    @field_validator(*_INT_LIMITS, mode="before")
    @classmethod
    def _ints(cls, value: Any) -> Any:
        return None if value is None else _positive_int(value, "limit")


class PluginWorkerPolicy(BaseModel):
    """The limits every plugin worker of an instance runs under."""

    model_config = _FROZEN

    max_cpus: float
    max_memory_mb: int
    max_pids: int
    max_open_files: int
    max_file_size_mb: int
    max_workers: int = 16
    max_total_cpus: float = 8.0
    max_total_memory_mb: int = 8192
    max_installations: int = 10_000
    max_pending_registrations: int = 1024
    max_concurrent_restarts: int = 1
    restart_failure_threshold: int = 8
    restart_failure_window_seconds: float = 30.0
    restart_circuit_open_seconds: float = 60.0
    require_hard_limits: bool = False
    dedicated: PluginWorkerResourceOverrides | None = None
    shared: PluginWorkerResourceOverrides | None = None

    @field_validator(
        "max_cpus",
        "max_total_cpus",
        "restart_failure_window_seconds",
        "restart_circuit_open_seconds",
        mode="before",
    )
    @classmethod
    def _numbers(cls, value: Any) -> float:
        return _positive_number(value, "limit")

    @field_validator(
        *_INT_LIMITS,
        "max_workers",
        "max_total_memory_mb",
        "max_installations",
        "max_pending_registrations",
        "max_concurrent_restarts",
        "restart_failure_threshold",
        mode="before",
    )
    @classmethod
    def _ints(cls, value: Any) -> int:
        return _positive_int(value, "limit")

    @field_validator("require_hard_limits", mode="before")
    @classmethod
    def _flag(cls, value: Any) -> bool:
        if not isinstance(value, bool):
            raise ValueError("require_hard_limits must be a boolean")
        return value

    @model_validator(mode="after")
    def _aggregates(self) -> Self:
        if self.max_total_cpus < self.max_cpus:
            raise ValueError("max_total_cpus cannot be lower than max_cpus")
        if self.max_total_memory_mb < self.max_memory_mb:
            raise ValueError("max_total_memory_mb cannot be lower than max_memory_mb")
        if self.max_installations < self.max_workers:
            raise ValueError("max_installations cannot be lower than max_workers")
        if self.restart_failure_threshold > self.max_installations:
            raise ValueError("restart_failure_threshold cannot exceed max_installations")
        if max(self.restart_failure_window_seconds, self.restart_circuit_open_seconds) > 3600:
            raise ValueError("restart windows cannot exceed 3600 seconds")
        return self

    def for_execution_mode(
        self, execution_mode: PluginExecutionMode | str, runtime_profile: str
    ) -> PluginWorkerPolicy:
        """The policy with the mode's overrides applied (only in the shared profile)."""
        if runtime_profile != "shared":
            return self
        shared = PluginExecutionMode(execution_mode) is PluginExecutionMode.SHARED_CERTIFIED
        override = self.shared if shared else self.dedicated
        if override is None:
            return self
        return self.model_copy(update=override.model_dump(exclude_none=True))

    @property
    def effective_worker_capacity(self) -> int:
        """How many workers the count, CPU and memory budgets allow together (at least 1)."""
        by_cpu = int(self.max_total_cpus // self.max_cpus)
        by_memory = self.max_total_memory_mb // self.max_memory_mb
        return max(min(self.max_workers, by_cpu, by_memory), 1)


class ActionContext(BaseModel):
    """A fenced workspace, set by the trusted side of a link (never from a payload)."""

    model_config = _FROZEN

    instance_uuid: str
    workspace_uuid: str
    placement_generation: int = 1
    installation_uuid: str | None = None

    @field_validator("instance_uuid", "workspace_uuid")
    @classmethod
    def _required(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value.strip()

    @field_validator("installation_uuid")
    @classmethod
    def _optional(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be empty")
        return None if value is None else value.strip()

    @field_validator("placement_generation")
    @classmethod
    def _generation(cls, value: int) -> int:
        if value < 1:
            raise ValueError("placement_generation must be greater than or equal to 1")
        return value

    def same_workspace(self, other: ActionContext) -> bool:
        """Whether ``other`` names the same instance, workspace and generation."""
        return (
            self.instance_uuid == other.instance_uuid
            and self.workspace_uuid == other.workspace_uuid
            and self.placement_generation == other.placement_generation
        )

    def for_installation(self, installation_uuid: str | None) -> ActionContext:
        """The same workspace with an installation capability."""
        return ActionContext(
            instance_uuid=self.instance_uuid,
            workspace_uuid=self.workspace_uuid,
            placement_generation=self.placement_generation,
            installation_uuid=installation_uuid,
        )

    def without_installation(self) -> ActionContext:
        """The workspace part alone (what runtime-level calls carry)."""
        if self.installation_uuid is None and type(self) is ActionContext:
            return self
        return self.for_installation(None)


class InstallationBinding(ActionContext):
    """The complete, immutable authority of one installation revision."""

    installation_uuid: str  # pyright: ignore[reportIncompatibleVariableOverride, reportGeneralTypeIssues]
    runtime_revision: int
    artifact_digest: str

    @field_validator("placement_generation", mode="before")
    @classmethod
    def _strict_generation(cls, value: Any) -> Any:
        return _strict_int(value, "placement_generation")

    @field_validator("runtime_revision", mode="before")
    @classmethod
    def _strict_revision(cls, value: Any) -> Any:
        return _strict_int(value, "runtime_revision")

    @field_validator("runtime_revision")
    @classmethod
    def _revision(cls, value: int) -> int:
        if value < 1:
            raise ValueError("runtime_revision must be greater than or equal to 1")
        return value

    @field_validator("artifact_digest")
    @classmethod
    def _digest(cls, value: str) -> str:
        if not _SHA256.fullmatch(value.strip()):
            raise ValueError("artifact_digest must be a lowercase SHA-256 hex digest")
        return value.strip()

    @property
    def execution_generation(self) -> int:
        """The target meaning of the wire's ``placement_generation``."""
        return self.placement_generation

    def same_installation(self, other: InstallationBinding) -> bool:
        return self == other


ActionEnvelopeContext = InstallationBinding | ActionContext
_ENVELOPE: TypeAdapter[ActionEnvelopeContext] = TypeAdapter(ActionEnvelopeContext)


def parse_action_envelope_context(
    value: ActionEnvelopeContext | dict[str, Any],
) -> ActionEnvelopeContext:
    """An envelope ``context``: a full binding when it has the fields, else a workspace."""
    if isinstance(value, ActionContext):
        return value
    return _ENVELOPE.validate_python(value)


class RuntimeConfig(BaseModel):
    """The instance handshake the host sends in ``set_runtime_config``."""

    model_config = _FROZEN

    runtime_identity: RuntimeIdentity
    worker_policy: PluginWorkerPolicy
    runtime_profile: Literal["oss_dev", "shared"] = "oss_dev"
    cloud_service_url: str | None = None

    @field_validator("cloud_service_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not value.strip().rstrip("/"):
            raise ValueError("cloud_service_url must not be empty")
        return value.strip().rstrip("/")

    def model_dump(  # pyright: ignore[reportIncompatibleMethodOverride]
        self, *, include_pending_registration_limit: bool = False, **kwargs: Any
    ) -> dict[str, Any]:
        """The wire payload: per-mode overrides only in the shared profile, and
        ``max_pending_registrations`` only when asked for."""
        payload = super().model_dump(**kwargs)
        policy = payload.get("worker_policy")
        if isinstance(policy, dict):
            for mode in ("dedicated", "shared"):
                if self.runtime_profile != "shared" or policy.get(mode) is None:
                    policy.pop(mode, None)
            if not include_pending_registration_limit:
                policy.pop("max_pending_registrations", None)
        return payload

    def model_dump_json(  # pyright: ignore[reportIncompatibleMethodOverride]
        self, *, include_pending_registration_limit: bool = False, **kwargs: Any
    ) -> str:
        return json.dumps(
            self.model_dump(
                include_pending_registration_limit=include_pending_registration_limit,
                mode="json",
                **kwargs,
            )
        )


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("enabled must be a boolean")
    return value


class PluginInstallationDesiredState(BaseModel):
    """One installation the control plane wants to exist (replayed on reconnect)."""

    model_config = _FROZEN

    binding: InstallationBinding
    enabled: bool = True
    execution_mode: PluginExecutionMode = PluginExecutionMode.DEDICATED

    @field_validator("enabled", mode="before")
    @classmethod
    def _enabled(cls, value: Any) -> bool:
        return _flag(value)


class ReconcilePluginInstallationsRequest(BaseModel):
    """The whole desired set of installations (``reconcile_plugin_installations``)."""

    model_config = _FROZEN

    installations: tuple[PluginInstallationDesiredState, ...]

    @model_validator(mode="after")
    def _unique(self) -> Self:
        ids = [item.binding.installation_uuid for item in self.installations]
        if len(ids) != len(set(ids)):
            raise ValueError("installations must contain unique installation_uuid values")
        return self


class ApplyPluginInstallationRequest(BaseModel):
    """``apply_plugin_installation``: the artifact pushed before, and the wanted state."""

    model_config = _FROZEN

    artifact_file_key: str | None = None
    enabled: bool = True
    execution_mode: PluginExecutionMode = PluginExecutionMode.DEDICATED

    @field_validator("artifact_file_key")
    @classmethod
    def _key(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("artifact_file_key must not be empty")
        return None if value is None else value.strip()

    @field_validator("enabled", mode="before")
    @classmethod
    def _enabled(cls, value: Any) -> bool:
        return _flag(value)


class RemovePluginInstallationRequest(BaseModel):
    """``remove_plugin_installation`` carries nothing but its envelope's binding."""

    model_config = _FROZEN
