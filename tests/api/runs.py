"""Run contexts for the run-API tests."""

from __future__ import annotations

from typing import Any

from langbot_plugin.api.entities.builtin.agent_runner import AgentRunContext
from langbot_plugin.host.run_context import build_run_context

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
    every = ["invoke", "stream", "rerank", "count_tokens"]
    resources = {
        "models": [{"model_id": "m", "operations": every}] if models is None else models,
        "tools": [{"tool_name": "t", "operations": ["detail", "call"]}] if tools is None else tools,
        "knowledge_bases": [{"kb_id": "kb", "operations": ["list", "retrieve"]}]
        if knowledge_bases is None
        else knowledge_bases,
        "storage": storage or {"plugin_storage": True, "workspace_storage": True},
    }
    context = build_run_context(
        "hi",
        run_id="run-1",
        event_id="e-1",
        conversation_id="c-1",
        resources=resources,
        available_apis=dict.fromkeys(ALL_APIS if apis is None else apis, True),
        timeout=deadline_in,
    )
    return AgentRunContext.model_validate(context)
