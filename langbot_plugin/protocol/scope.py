"""The envelope scope: one model, a strict form for what we send and a lenient parse.

The released host tags what it sends with an *action context* (instance, workspace,
placement generation) or a full *installation binding* (plus installation uuid, runtime
revision and artifact digest); debug plugins are served under a per-workspace *bridge*
installation. :class:`ActionContext` and :class:`InstallationBinding` are the strict
forms (frozen, validated; the released host imports them from
``langbot_plugin.entities.io.context``); :class:`ActionScope` is the lenient parse the
runtime reads (every field optional, unknown keys ignored, a wrong type refused
``invalid_params``: :meth:`ActionScope.from_peer`); :func:`bridge_binding` computes the
bridge for both sides. Both forms name exactly :data:`SCOPE_FIELDS`.
"""

from __future__ import annotations

import functools
import hashlib
import re
import uuid
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from langbot_plugin.api.entities.execution import SCOPE_FIELDS as WORKSPACE_FIELDS
from langbot_plugin.rpc.errors import InvalidParamsError

__all__ = [
    "SCOPE_FIELDS",
    "ActionContext",
    "ActionEnvelopeContext",
    "ActionScope",
    "InstallationBinding",
    "bridge_binding",
    "bridge_installation_uuid",
    "parse_action_envelope_context",
    "strict_int",
]

#: Every field of an envelope scope, in the host's order: the workspace part (what
#: entities carry, :data:`~langbot_plugin.api.entities.execution.SCOPE_FIELDS`), then
#: the installation's.
SCOPE_FIELDS = (*WORKSPACE_FIELDS, "installation_uuid", "runtime_revision", "artifact_digest")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_FROZEN = ConfigDict(extra="forbid", frozen=True)


def strict_int(value: Any, name: str) -> Any:
    """``value`` if it is an integer (never a bool, a float or a numeric string)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer")
    return value


# --------------------------------------------------------------------------- strict


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
        workspace = self.model_dump(include={*WORKSPACE_FIELDS})
        return ActionContext(**workspace, installation_uuid=installation_uuid)

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

    @field_validator("placement_generation", "runtime_revision", mode="before")
    @classmethod
    def _strict(cls, value: Any, info: ValidationInfo) -> Any:
        return strict_int(value, str(info.field_name))

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
    """An envelope ``context``, strictly: a full binding when it has the fields, else a
    workspace."""
    if isinstance(value, ActionContext):
        return value
    return _ENVELOPE.validate_python(value)


# --------------------------------------------------------------------------- lenient


class ActionScope(BaseModel):
    """The lenient parse of an envelope ``context``: the :data:`SCOPE_FIELDS`, each
    optional, unknown keys ignored (what the runtime reads from its peers)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    instance_uuid: str | None = None
    workspace_uuid: str | None = None
    placement_generation: int | None = None
    installation_uuid: str | None = None
    runtime_revision: int | None = None
    artifact_digest: str | None = None

    @classmethod
    def from_context(cls, context: dict[str, Any] | None) -> ActionScope:
        """The scope of an envelope ``context`` (``invalid_params`` when it is malformed)."""
        return cls.from_peer(context or {}, "context")

    @classmethod
    def from_peer(cls, value: object, path: str) -> ActionScope:
        """A scope a peer sent at ``path``; a malformed one is :class:`InvalidParamsError`
        naming the first bad field (``context.placement_generation``)."""
        try:
            return cls.model_validate(value)
        except ValidationError as exc:
            first = exc.errors(include_url=False, include_input=False)[0]
            where = ".".join([path, *(str(part) for part in first["loc"])])
            raise InvalidParamsError(
                f"{where}: {first['msg']}", details={"path": where, "errors": exc.error_count()}
            ) from None

    @classmethod
    def of(cls, context: ActionContext) -> ActionScope:
        """The lenient view of a strict context."""
        return cls.model_validate(context.model_dump())

    def strict(self) -> ActionEnvelopeContext:
        """This scope in its strict form (pydantic's ``ValidationError`` when it has none)."""
        return parse_action_envelope_context(self.as_context())

    @property
    def workspace_key(self) -> tuple[str | None, str | None]:
        return (self.instance_uuid, self.workspace_uuid)

    def shares_workspace_with(self, other: ActionScope) -> bool:
        """Whether a request in one scope may address what belongs to the other: yes
        unless both name a workspace and their (instance, workspace) pairs differ (a
        scope naming none is one host's single workspace)."""
        return (
            self.workspace_uuid is None
            or other.workspace_uuid is None
            or self.workspace_key == other.workspace_key
        )

    def workspace_context(self) -> dict[str, Any]:
        """Only the workspace part: what the host accepts for settings calls."""
        return self.model_dump(include=set(WORKSPACE_FIELDS), exclude_none=True)

    def as_context(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


# --------------------------------------------------------------------------- bridge


def _bridge_seed(instance_uuid: str, workspace_uuid: str) -> str:
    return f"langbot:oss-plugin-bridge:{instance_uuid}:{workspace_uuid}"


@functools.lru_cache(maxsize=256)
def bridge_installation_uuid(instance_uuid: str, workspace_uuid: str) -> str:
    """The installation uuid the host uses to address debug plugins of a workspace.

    Cached: the runtime asks for it on every call routed to a debug plugin, and a
    runtime serves a handful of workspaces.
    """
    return str(uuid.uuid5(uuid.NAMESPACE_URL, _bridge_seed(instance_uuid, workspace_uuid)))


def bridge_binding(scope: ActionScope) -> ActionScope | None:
    """The bridge binding of ``scope``'s workspace (the binding the host builds for it),
    or ``None`` without one."""
    if scope.instance_uuid is None or scope.workspace_uuid is None:
        return None
    seed = _bridge_seed(scope.instance_uuid, scope.workspace_uuid)
    return ActionScope(
        instance_uuid=scope.instance_uuid,
        workspace_uuid=scope.workspace_uuid,
        placement_generation=scope.placement_generation or 1,
        installation_uuid=bridge_installation_uuid(scope.instance_uuid, scope.workspace_uuid),
        runtime_revision=1,
        artifact_digest=hashlib.sha256(seed.encode()).hexdigest(),
    )
