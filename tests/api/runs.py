"""Run contexts for the run-API tests."""

from __future__ import annotations

import time
from typing import Any

from langbot_plugin.api.entities.builtin.agent_runner import AgentRunContext

ALL_APIS = [
    "prompt_get", "history_page", "history_search", "event_get", "event_page", "state",
    "storage", "steering_pull", "run_get", "run_list", "run_events_page", "run_cancel",
    "run_append_result", "run_finalize",
]  # fmt: skip


def run_context(
    *,
    models: list[dict[str, Any]] | None = None,
    tools: list[dict[str, Any]] | None = None,
    knowledge_bases: list[dict[str, Any]] | None = None,
    storage: dict[str, bool] | None = None,
    apis: list[str] | None = None,
    deadline_in: float | None = 600.0,
) -> AgentRunContext:
    """A run granted everything by default; narrow it with the arguments."""
    granted_apis = ALL_APIS if apis is None else apis
    return AgentRunContext.model_validate(
        {
            "run_id": "run-1",
            "trigger": {"type": "message.received"},
            "event": {"event_id": "e-1", "event_type": "message.received", "source": "platform"},
            "conversation": {"conversation_id": "c-1"},
            "input": {"text": "hi"},
            "delivery": {"surface": "platform"},
            "resources": {
                "models": models
                if models is not None
                else [
                    {"model_id": "m", "operations": ["invoke", "stream", "rerank", "count_tokens"]}
                ],
                "tools": tools
                if tools is not None
                else [{"tool_name": "t", "operations": ["detail", "call"]}],
                "knowledge_bases": knowledge_bases
                if knowledge_bases is not None
                else [{"kb_id": "kb", "operations": ["list", "retrieve"]}],
                "storage": storage or {"plugin_storage": True, "workspace_storage": True},
            },
            "context": {
                "conversation_id": "c-1",
                "available_apis": dict.fromkeys(granted_apis, True),
            },
            "runtime": {
                "deadline_at": time.time() + deadline_in if deadline_in is not None else None
            },
        }
    )
