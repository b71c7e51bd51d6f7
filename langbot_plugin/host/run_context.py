"""Building a realistic ``AgentRunContext`` dict, as the 4.11.2 host sends it.

:func:`build_run_context` returns the ``context`` of a ``run_runner`` request for a
person chat message, with the keys and nesting captured from the real host; everything
can be overridden and nothing is registered
(:meth:`langbot_plugin.host.run_host.RunHost.start_run` does that).
:func:`make_resources` writes ``resources`` with explicit operations: a bare id is
granted every operation of its kind, spelled out.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from langbot_plugin.host.grants import RESOURCE_KINDS, STATE_SCOPES
from langbot_plugin.protocol.host_api import artifacts as art
from langbot_plugin.protocol.host_api import run_context as rc
from langbot_plugin.protocol.host_api import run_ledger as rl
from langbot_plugin.protocol.run_needs import AVAILABLE_APIS, api_flag

__all__ = ["DEFAULT_APIS", "build_run_context", "make_resources"]

#: Context APIs on by default in a local run (the 4.11.2 host also sends the rest, false).
DEFAULT_APIS = tuple(
    dict.fromkeys(
        api_flag(spec)
        for spec in (
            rc.GET_PROMPT,
            rc.HISTORY_PAGE,
            rc.HISTORY_SEARCH,
            rc.EVENT_GET,
            rc.EVENT_PAGE,
            rc.STATE_GET,
            rc.STEERING_PULL,
            art.ARTIFACT_METADATA,
            art.ARTIFACT_READ,
            art.ARTIFACT_UPLOAD_BEGIN,
            rl.RUN_GET,
            rl.RUN_LIST,
            rl.RUN_EVENTS_PAGE,
            rl.RUN_CANCEL,
        )
    )
)

Grants = Mapping[str, Iterable[str]] | Iterable[str] | None


def _entries(kind: str, grants: Grants) -> list[dict[str, Any]]:
    _key, id_field, known = RESOURCE_KINDS[kind]
    if grants is None:
        return []
    if isinstance(grants, Mapping):
        pairs = [(name, list(ops)) for name, ops in grants.items()]
    else:
        pairs = [(name, sorted(known)) for name in grants]
    return [{id_field: name, "operations": ops} for name, ops in pairs]


def make_resources(
    *,
    models: Grants = None,
    tools: Grants = None,
    knowledge_bases: Grants = None,
    plugin_storage: bool = False,
    workspace_storage: bool = False,
) -> dict[str, Any]:
    """A ``resources`` dict; each kind maps ids to operations, or lists ids (all ops)."""
    return {
        "models": [
            {**e, "model_type": "llm", "provider": "local"} for e in _entries("model", models)
        ],
        "tools": [
            {**e, "tool_type": "plugin", "description": None} for e in _entries("tool", tools)
        ],
        "knowledge_bases": [
            {**e, "kb_name": e["kb_id"], "kb_type": None}
            for e in _entries("knowledge_base", knowledge_bases)
        ],
        "skills": [],
        "storage": {"plugin_storage": plugin_storage, "workspace_storage": workspace_storage},
        "platform_capabilities": {},
    }


def _as_json(value: Any) -> dict[str, Any]:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return dict(value)


def _apis(enabled: Mapping[str, bool] | Iterable[str] | None) -> dict[str, bool]:
    if isinstance(enabled, Mapping):
        flags: dict[str, bool] = dict.fromkeys(AVAILABLE_APIS, False)
        flags.update({str(k): bool(v) for k, v in enabled.items()})
        return flags
    on = set(DEFAULT_APIS if enabled is None else enabled)
    return {name: name in on for name in dict.fromkeys((*AVAILABLE_APIS, *on))}


def build_run_context(
    text: str | None = "hello",
    *,
    run_id: str | None = None,
    resources: Mapping[str, Any] | Any | None = None,
    available_apis: Mapping[str, bool] | Iterable[str] | None = None,
    deadline_at: float | None = None,
    timeout: float | None = 300.0,
    workspace_id: str = "local-workspace",
    bot_id: str = "local-bot",
    launcher_type: str = "person",
    launcher_id: str = "local-user",
    sender_id: str | None = None,
    sender_name: str = "User",
    conversation_id: str | None = None,
    thread_id: str | None = None,
    event_id: str | None = None,
    contents: list[dict[str, Any]] | None = None,
    attachments: list[dict[str, Any]] | None = None,
    config: Mapping[str, Any] | None = None,
    state: Mapping[str, Mapping[str, Any]] | None = None,
    latest_cursor: str | None = None,
    transcript_seq: int | None = None,
    event_seq: int | None = None,
    supports_streaming: bool = True,
    langbot_version: str = "v4.11.2",
    clock: Any = time.time,
) -> dict[str, Any]:
    """A run context for one incoming chat message (see the module docstring).

    ``deadline_at`` wins over ``timeout`` (seconds from now; ``None`` for no deadline).
    ``available_apis`` is a mapping of flags or the names to switch on (default
    :data:`DEFAULT_APIS`). ``conversation_id`` defaults to ``<launcher_type>_<launcher_id>``.
    """
    now = clock()
    run_id = run_id or str(uuid.uuid4())
    sender = sender_id or launcher_id
    conversation = conversation_id or f"{launcher_type}_{launcher_id}"
    if deadline_at is None and timeout is not None:
        deadline_at = now + timeout
    parts = contents if contents is not None else [{"type": "text", "text": text or ""}]
    unset = dict.fromkeys(("image_url", "image_base64", "file_url", "file_base64", "file_name"))
    full_parts = [{**unset, **part} for part in parts]
    target = {"target_type": launcher_type, "target_id": launcher_id, "message_id": -1}
    params = {
        "launcher_type": launcher_type,
        "launcher_id": launcher_id,
        "sender_id": sender,
        "session_id": f"{launcher_type}_{launcher_id}",
        "conversation_id": None,
        "msg_create_time": int(now),
        "group_name": "",
        "sender_name": sender_name,
        "user_message_text": text or "",
    }
    snapshot = {scope: dict((state or {}).get(scope, {})) for scope in STATE_SCOPES}
    return {
        "run_id": run_id,
        "trigger": {"type": "message.received", "source": "host_adapter", "timestamp": int(now)},
        "conversation": {
            "session_id": None,
            "conversation_id": conversation,
            "thread_id": thread_id,
            "launcher_type": None,
            "launcher_id": None,
            "sender_id": sender,
            "bot_id": bot_id,
            "workspace_id": workspace_id,
        },
        "event": {
            "event_id": event_id or f"host:{uuid.uuid4().hex}",
            "event_type": "message.received",
            "event_time": int(now),
            "source": "host_adapter",
            "source_event_type": "FriendMessage" if launcher_type == "person" else "GroupMessage",
            "raw_ref": None,
            "data": {"workspace_uuid": workspace_id, "time": now},
        },
        "actor": {"actor_type": "user", "actor_id": sender, "actor_name": sender_name},
        "subject": {
            "subject_type": "message",
            "subject_id": "",
            "data": {
                "launcher_type": launcher_type,
                "launcher_id": launcher_id,
                "sender_id": sender,
                "bot_uuid": bot_id,
            },
        },
        "input": {"text": text, "contents": full_parts, "attachments": list(attachments or [])},
        "delivery": {
            "automatic_reply": True,
            "surface": "platform",
            "reply_target": target,
            "supports_streaming": supports_streaming,
            "supports_edit": False,
            "supports_reaction": False,
            "max_message_size": None,
            "platform_capabilities": {"adapter": "LocalHost", "supported_apis": []},
        },
        "resources": _as_json(resources) if resources is not None else make_resources(),
        "context": {
            "conversation_id": conversation,
            "thread_id": thread_id,
            "latest_cursor": latest_cursor,
            "event_seq": event_seq,
            "transcript_seq": transcript_seq,
            "has_history_before": latest_cursor is not None,
            "inline_policy": {
                "mode": "current_event",
                "delivered_count": 0,
                "source_total_count": None,
                "messages_complete": False,
                "reason": "current_event_only",
            },
            "available_apis": _apis(available_apis),
        },
        "state": snapshot,
        "runtime": {
            "langbot_version": langbot_version,
            "trace_id": run_id,
            "deadline_at": deadline_at,
            "metadata": {
                "bot_id": bot_id,
                "workspace_id": workspace_id,
                "streaming_supported": supports_streaming,
                "model_context_window_tokens": None,
            },
        },
        "config": dict(config or {}),
        "adapter": {"extra": {"params": params}},
        "metadata": {},
        "variables": dict(params),
    }
