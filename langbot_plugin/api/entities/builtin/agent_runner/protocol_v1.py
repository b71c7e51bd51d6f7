"""Parts of the run context only seed 003's Protocol v1 defines: ``ctx.bootstrap``,
``ctx.runtime.host`` / ``locale`` / ``timezone`` / ``static_refs`` and
``ctx.resources.files``.

The released host sends none of them, and the released SDKs have no such attributes
(their own tests check that a context has no ``bootstrap``). So they are not declared
fields: a context dumps exactly what the host sent, as before, and properties read them
typed from what the host did send (the context keeps unknown keys). ``ctx.bootstrap``
exists only when the host inlined something (``getattr(ctx, "bootstrap", None)``);
``ctx.runtime.host`` is ``"langbot"``, ``locale`` / ``timezone`` ``None``, ``static_refs``
and ``ctx.resources.files`` empty when the host did not send them.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, Field

from langbot_plugin.api.entities.builtin.agent_runner.compat import HostContextModel

__all__ = ["ArtifactRef", "BootstrapContext", "FileResource", "StaticContextRef", "extra_as"]

M = TypeVar("M", bound=BaseModel)


class ArtifactRef(HostContextModel):
    """A reference to a host-held artifact (its bytes come through ``api.artifacts``)."""

    artifact_id: str
    artifact_type: str | None = None
    mime_type: str | None = None
    name: str | None = None
    size_bytes: int | None = None
    expires_at: float | None = None


class BootstrapContext(HostContextModel):
    """What a ``host_bootstrap`` or ``hybrid`` runner asked the host to inline. Messages
    are the host's dicts (``role``, ``content``); a self-managed runner gets none."""

    messages: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])
    summary: str | None = None
    artifacts: list[ArtifactRef] = Field(default_factory=list[ArtifactRef])
    metadata: dict[str, Any] = Field(default_factory=dict[str, Any])


class StaticContextRef(HostContextModel):
    """A stable reference (with version or hash) to static context: a system policy, a
    tool schema, a resource manifest."""

    ref: str | None = None
    version: str | None = None
    hash: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict[str, Any])


class FileResource(HostContextModel):
    """A file the run may read (a binding config file or a knowledge-base file)."""

    file_id: str
    kind: str | None = None
    name: str | None = None
    mime_type: str | None = None
    size: int | None = None


def extra_as(model: BaseModel, key: str, cls: type[M]) -> M | None:
    """The unknown key ``key`` the host sent in ``model``, as ``cls`` (``None`` if absent)."""
    raw = (model.model_extra or {}).get(key)
    if raw is None or isinstance(raw, cls):
        return raw
    return cls.model_validate(raw)
