"""The runtime handshake and the installation requests: one model each.

The host sends ``set_runtime_config`` (:class:`RuntimeConfig`) first on every control
connection, then the installation actions. These are the strict forms (frozen, no
extra fields, validated): what a host builds (the released host imports them from
``langbot_plugin.entities.io.context``) and the catalogue documents. The runtime reads
the handshake with :meth:`RuntimeConfig.from_peer`, the lenient parse (GUIDE section
9): a part that does not fit takes the default of :data:`DEFAULT_WORKER_POLICY` /
:data:`UNKNOWN_RUNTIME` and is named in one warning.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
from enum import StrEnum
from typing import Annotated, Any, Literal, Self, TypeVar, cast, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    ValidationError,
    field_validator,
    model_validator,
)

from langbot_plugin.protocol.scope import InstallationBinding

__all__ = [
    "DEFAULT_WORKER_POLICY",
    "UNKNOWN_RUNTIME",
    "ApplyPluginInstallationRequest",
    "ExecutionMode",
    "PluginExecutionMode",
    "PluginInstallationDesiredState",
    "PluginWorkerPolicy",
    "PluginWorkerResourceOverrides",
    "ReconcilePluginInstallationsRequest",
    "RemovePluginInstallationRequest",
    "RuntimeConfig",
    "RuntimeIdentity",
    "lenient",
]

logger = logging.getLogger("langbot_plugin.protocol")

_FROZEN = ConfigDict(extra="forbid", frozen=True)
M = TypeVar("M", bound=BaseModel)


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


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("enabled must be a boolean")
    return value


#: An installation's ``enabled``: a JSON boolean only (never ``1`` or ``"true"``).
Enabled = Annotated[bool, BeforeValidator(_flag)]


class PluginExecutionMode(StrEnum):
    """Where the control plane places an installation's code."""

    DEDICATED = "dedicated"
    SHARED_CERTIFIED = "shared-runtime-v1"


#: The modes' wire names, for parameters that take them as plain strings.
ExecutionMode = Literal["dedicated", "shared-runtime-v1"]
assert set(get_args(ExecutionMode)) == {mode.value for mode in PluginExecutionMode}


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


#: The policy of LangBot's default ``plugin.worker`` configuration; what a handshake
#: without a usable policy is read as, and what our clients send by default.
DEFAULT_WORKER_POLICY = PluginWorkerPolicy(
    max_cpus=1.0, max_memory_mb=512, max_pids=128, max_open_files=256, max_file_size_mb=512
)
#: The identity of a handshake that names none.
UNKNOWN_RUNTIME = RuntimeIdentity(instance_uuid="unknown", runtime_id="unknown")

_warned: set[str] = set()


def _warn_once(text: str) -> None:
    if text not in _warned:
        _warned.add(text)
        logger.warning("%s", text)


def lenient(model: type[M], value: object, fallback: M, where: str) -> M:
    """``value`` a peer sent as ``model``, leniently: the model if it fits; else each
    field that fits is kept and each that does not (or is unknown) takes ``fallback``'s
    value, with one warning naming them; ``fallback`` itself when nothing can be kept."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
    off = sorted({str(e["loc"][0]) for e in errors if e["loc"]} or {"(the value)"})
    result = fallback
    if isinstance(value, Mapping):
        given = cast(Mapping[str, Any], value)
        kept = {k: v for k, v in given.items() if k not in off and k in model.model_fields}
        try:
            result = model.model_validate({**dict(fallback), **kept})
        except ValidationError:
            result = fallback
    _warn_once(f"{where}: {', '.join(off)} off the schema; read with defaults there")
    return result


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

    @classmethod
    def from_peer(cls, data: Mapping[str, Any]) -> RuntimeConfig:
        """The lenient parse of a host's ``set_runtime_config`` (see the module doc)."""
        identity = lenient(
            RuntimeIdentity, data.get("runtime_identity"), UNKNOWN_RUNTIME, "runtime_identity"
        )
        policy = lenient(
            PluginWorkerPolicy, data.get("worker_policy"), DEFAULT_WORKER_POLICY, "worker_policy"
        )
        fallback = cls(runtime_identity=identity, worker_policy=policy)
        parts = {"runtime_identity": identity, "worker_policy": policy}
        return lenient(cls, {**data, **parts}, fallback, "set_runtime_config")

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


# --------------------------------------------------------------------------- installations


class PluginInstallationDesiredState(BaseModel):
    """One installation the control plane wants to exist (replayed on reconnect)."""

    model_config = _FROZEN

    binding: InstallationBinding
    enabled: Enabled = True
    execution_mode: PluginExecutionMode = PluginExecutionMode.DEDICATED


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
    enabled: Enabled = True
    execution_mode: PluginExecutionMode = PluginExecutionMode.DEDICATED

    @field_validator("artifact_file_key")
    @classmethod
    def _key(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("artifact_file_key must not be empty")
        return None if value is None else value.strip()


class RemovePluginInstallationRequest(BaseModel):
    """``remove_plugin_installation`` carries nothing but its envelope's binding."""

    model_config = _FROZEN
