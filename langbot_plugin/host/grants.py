"""What a run may touch, frozen when it starts: grants and scope identities.

:class:`RunGrants` is the authorization snapshot computed once from the run context
and never widened: the resources with their operations (an empty ``operations`` list
grants its kind's defaults, as the released host reads it; an unlisted resource gets
nothing), the storage areas, the APIs on in ``available_apis`` and the enabled state
scopes. :class:`RunScope` holds the identities the run is about; state keys and the
conversation limits of the history, event and ledger APIs derive from it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from langbot_plugin.api.entities.builtin.agent_runner.operations import effective_operations
from langbot_plugin.host.errors import ApiNotAvailableError, ResourceNotGrantedError
from langbot_plugin.protocol.host_api import run_context
from langbot_plugin.protocol.run_needs import STORAGE_AREAS, api_flag
from langbot_plugin.protocol.runners import PERMISSIONS

__all__ = ["RESOURCE_KINDS", "STATE_SCOPES", "STEERING_FLAG", "RunGrants", "RunScope"]

#: The ``available_apis`` flag that lets a run pull steering input.
STEERING_FLAG = api_flag(run_context.STEERING_PULL)

#: Resource kind -> (key in ``ctx.resources``, id field of an entry, known operations).
RESOURCE_KINDS: dict[str, tuple[str, str, frozenset[str]]] = {
    kind: (key, id_field, frozenset(PERMISSIONS[key]))
    for kind, key, id_field in (
        ("model", "models", "model_id"),
        ("tool", "tools", "tool_name"),
        ("knowledge_base", "knowledge_bases", "kb_id"),
    )
}

#: The persistent-state scopes, in the protocol's order.
STATE_SCOPES: tuple[str, ...] = ("conversation", "actor", "subject", "runner")

Grants = Mapping[str, frozenset[str]]


def _as_dict(value: Any) -> dict[str, Any]:
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    return dict(value) if isinstance(value, Mapping) else {}


def _entries(resources: dict[str, Any], kind: str) -> Grants:
    key, id_field, _known = RESOURCE_KINDS[kind]
    grants: dict[str, frozenset[str]] = {}
    raw = resources.get(key)
    for item in raw if isinstance(raw, list) else []:
        entry = _as_dict(item)
        resource_id = entry.get(id_field)
        if not isinstance(resource_id, str) or not resource_id:
            continue
        ops = entry.get("operations")
        granted = effective_operations(kind, ops if isinstance(ops, list) else None)
        grants[resource_id] = grants.get(resource_id, frozenset()) | granted
    return MappingProxyType(grants)


@dataclass(frozen=True, slots=True)
class RunGrants:
    """The authorization snapshot of one run (immutable)."""

    models: Grants = field(default_factory=lambda: MappingProxyType({}))
    tools: Grants = field(default_factory=lambda: MappingProxyType({}))
    knowledge_bases: Grants = field(default_factory=lambda: MappingProxyType({}))
    storage: frozenset[str] = frozenset()
    apis: frozenset[str] = frozenset()
    state_scopes: frozenset[str] = frozenset(STATE_SCOPES)

    @classmethod
    def from_context(
        cls,
        resources: Mapping[str, Any] | Any,
        available_apis: Mapping[str, Any] | Any,
        *,
        state_scopes: Iterable[str] | None = None,
    ) -> RunGrants:
        """Freeze the grants of ``ctx.resources`` and ``ctx.context.available_apis``.

        Both may be dicts or the SDK's models. Only APIs whose flag is exactly
        ``true`` are on. ``state_scopes`` (default: all four) is what the binding's
        state policy enables; the ``state`` API must be on as well.
        """
        res = _as_dict(resources)
        storage = _as_dict(res.get("storage"))
        apis = _as_dict(available_apis)
        scopes = STATE_SCOPES if state_scopes is None else tuple(state_scopes)
        return cls(
            models=_entries(res, "model"),
            tools=_entries(res, "tool"),
            knowledge_bases=_entries(res, "knowledge_base"),
            storage=frozenset(
                area for area in STORAGE_AREAS if storage.get(f"{area}_storage") is True
            ),
            apis=frozenset(name for name, on in apis.items() if on is True),
            state_scopes=frozenset(s for s in scopes if s in STATE_SCOPES),
        )

    def of_kind(self, kind: str) -> Grants:
        return getattr(self, RESOURCE_KINDS[kind][0])  # the kind's key names its field

    def require_resource(self, kind: str, resource_id: object, operation: str, run_id: str) -> None:
        """Refuse unless ``operation`` is granted on the resource (``resource_not_granted``)."""
        granted = self.of_kind(kind)
        label = kind.replace("_", " ")
        details = {"kind": kind, "resource": resource_id, "operation": operation, "run_id": run_id}
        if not isinstance(resource_id, str) or resource_id not in granted:
            raise ResourceNotGrantedError(
                f"{label} {resource_id!r} is not authorized for agent run {run_id}", details=details
            )
        if operation not in granted[resource_id]:
            raise ResourceNotGrantedError(
                f"{label} {resource_id!r} is not authorized for {operation} in agent run {run_id} "
                f"(granted: {sorted(granted[resource_id]) or 'nothing'})",
                details=details,
            )

    def require_storage(self, area: str, run_id: str) -> None:
        if area not in self.storage:
            raise ResourceNotGrantedError(
                f"{area} storage is not authorized for agent run {run_id}",
                details={"kind": "storage", "resource": area, "run_id": run_id},
            )

    def require_api(self, name: str, run_id: str) -> None:
        if name not in self.apis:
            raise ApiNotAvailableError(
                f"{name} is not available for agent run {run_id}",
                details={"api": name, "run_id": run_id},
            )

    def to_dict(self) -> dict[str, Any]:
        """A JSON form of the snapshot (for logs, the ledger and debugging)."""
        return {
            "models": {k: sorted(v) for k, v in self.models.items()},
            "tools": {k: sorted(v) for k, v in self.tools.items()},
            "knowledge_bases": {k: sorted(v) for k, v in self.knowledge_bases.items()},
            "storage": sorted(self.storage),
            "apis": sorted(self.apis),
            "state_scopes": [s for s in STATE_SCOPES if s in self.state_scopes],
        }


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True, slots=True)
class RunScope:
    """The identities a run is about; ``None`` where the event has none."""

    workspace_id: str | None = None
    bot_id: str | None = None
    conversation_id: str | None = None
    thread_id: str | None = None
    actor_type: str | None = None
    actor_id: str | None = None
    subject_type: str | None = None
    subject_id: str | None = None
    binding_id: str | None = None

    @classmethod
    def from_context(cls, context: Mapping[str, Any], binding_id: str | None = None) -> RunScope:
        """Read the identities from a run context dict (the host's own build)."""
        conversation = _as_dict(context.get("conversation"))
        access = _as_dict(context.get("context"))
        actor = _as_dict(context.get("actor"))
        subject = _as_dict(context.get("subject"))
        metadata = _as_dict(_as_dict(context.get("runtime")).get("metadata"))
        return cls(
            workspace_id=_text(conversation.get("workspace_id"))
            or _text(metadata.get("workspace_id")),
            bot_id=_text(conversation.get("bot_id")) or _text(metadata.get("bot_id")),
            conversation_id=_text(conversation.get("conversation_id"))
            or _text(access.get("conversation_id")),
            thread_id=_text(conversation.get("thread_id")) or _text(access.get("thread_id")),
            actor_type=_text(actor.get("actor_type")),
            actor_id=_text(actor.get("actor_id")),
            subject_type=_text(subject.get("subject_type")),
            subject_id=_text(subject.get("subject_id")),
            binding_id=binding_id,
        )

    def state_key(self, scope: str, runner_id: str) -> str | None:
        """The storage key of ``scope`` for ``runner_id``, or ``None`` if the run lacks
        the identity that scope needs (no conversation, no actor id, no subject id).

        Keys hash a canonical JSON of their parts, so no two different identities
        can collide (joining with separators could: ``a:b`` + ``c`` vs ``a`` + ``b:c``).
        """
        parts: dict[str, Any] = {
            "runner_id": runner_id,
            "binding_id": self.binding_id,
            "bot_id": self.bot_id,
            "workspace_id": self.workspace_id,
        }
        if scope == "conversation":
            if self.conversation_id is None:
                return None
            parts.update(conversation_id=self.conversation_id, thread_id=self.thread_id)
        elif scope == "actor":
            if self.actor_id is None:
                return None
            parts.update(actor_type=self.actor_type or "user", actor_id=self.actor_id)
        elif scope == "subject":
            if self.subject_id is None:
                return None
            parts.update(subject_type=self.subject_type or "unknown", subject_id=self.subject_id)
        elif scope != "runner":
            return None
        raw = json.dumps({"scope": scope, **parts}, sort_keys=True, separators=(",", ":"))
        return f"{scope}:{hashlib.sha256(raw.encode()).hexdigest()}"

    def binding_key(self, runner_id: str) -> str:
        """The key of the ``binding`` storage area for ``runner_id``: its binding
        (``binding_id``, the bot/pipeline binding the host resolved) in its workspace;
        a run started without a binding id belongs to its bot's binding of the runner."""
        parts: dict[str, Any] = {"runner_id": runner_id, "workspace_id": self.workspace_id}
        if self.binding_id is not None:
            parts["binding_id"] = self.binding_id
        else:
            parts["bot_id"] = self.bot_id
        raw = json.dumps(parts, sort_keys=True, separators=(",", ":"))
        return f"binding:{hashlib.sha256(raw.encode()).hexdigest()}"

    def conversation_ref(self) -> str | None:
        """One id for this conversation whichever runner or binding serves it (what
        "clear" drops every runner's conversation state by); ``None`` without one."""
        if self.conversation_id is None:
            return None
        parts = {
            "workspace_id": self.workspace_id,
            "bot_id": self.bot_id,
            "conversation_id": self.conversation_id,
            "thread_id": self.thread_id,
        }
        raw = json.dumps(parts, sort_keys=True, separators=(",", ":"))
        return f"conv:{hashlib.sha256(raw.encode()).hexdigest()}"

    def state_keys(self, runner_id: str) -> dict[str, str]:
        """Every scope that has a key for this run."""
        keys = {scope: self.state_key(scope, runner_id) for scope in STATE_SCOPES}
        return {scope: key for scope, key in keys.items() if key is not None}

    def sees_conversation(self, conversation_id: str | None, thread_id: str | None) -> bool:
        """Whether a record of that conversation/thread belongs to this run's scope."""
        return (
            self.conversation_id is not None
            and conversation_id == self.conversation_id
            and thread_id == self.thread_id
        )
