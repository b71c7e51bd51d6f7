"""Tenancy scopes carried in the envelope ``context``.

The released host tags what it sends with an *action context* (instance, workspace,
placement generation) or a full *installation binding* (plus installation uuid,
runtime revision and artifact digest), and requires one on almost everything a
runtime sends back. Debug plugins are served under a per-workspace *bridge*
installation whose uuid the host derives from the instance and workspace ids.
"""

from __future__ import annotations

import functools
import hashlib
import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from langbot_plugin.rpc.errors import InvalidParamsError

__all__ = ["ActionScope", "bridge_binding", "bridge_installation_uuid"]


class ActionScope(BaseModel):
    """The scope fields of an envelope ``context`` (binding fields optional)."""

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
        return self.model_dump(
            include={"instance_uuid", "workspace_uuid", "placement_generation"}, exclude_none=True
        )

    def as_context(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)

    @property
    def is_binding(self) -> bool:
        return self.installation_uuid is not None


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
    """The bridge binding of ``scope``'s workspace, or ``None`` without one."""
    if scope.instance_uuid is None or scope.workspace_uuid is None:
        return None
    seed = _bridge_seed(scope.instance_uuid, scope.workspace_uuid)
    return ActionScope(
        instance_uuid=scope.instance_uuid,
        workspace_uuid=scope.workspace_uuid,
        placement_generation=scope.placement_generation or 1,
        installation_uuid=str(uuid.uuid5(uuid.NAMESPACE_URL, seed)),
        runtime_revision=1,
        artifact_digest=hashlib.sha256(seed.encode()).hexdigest(),
    )
