"""What a run-scoped call needs from its run's grants, for the actions that reach the host.

Declared once and enforced twice: the runtime refuses a call before forwarding it
(:mod:`langbot_plugin.runtime.runs`), and the host's gate refuses it again before
serving it (:mod:`langbot_plugin.host.gate`). Each side adds the actions only it sees
(the runtime the plugin-side storage and run APIs, the host its binary storage).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["BOX_ACTIONS", "NEEDS", "ApiNeed", "Need", "ResourceNeed"]


@dataclass(frozen=True, slots=True)
class ResourceNeed:
    """The resource named by ``field`` of the payload must be granted for ``operation``."""

    kind: Literal["model", "tool", "knowledge_base"]
    field: str
    operation: str


@dataclass(frozen=True, slots=True)
class ApiNeed:
    """The run's ``available_apis`` must include ``api``."""

    api: str


Need = ResourceNeed | ApiNeed

BOX_ACTIONS = (
    "get_box_status",
    "list_boxes",
    "acquire_box",
    "bind_box",
    "import_box_attachments",
    "export_box_files",
)

NEEDS: dict[str, Need] = {
    "invoke_llm": ResourceNeed("model", "llm_model_uuid", "invoke"),
    "invoke_llm_stream": ResourceNeed("model", "llm_model_uuid", "stream"),
    "count_tokens": ResourceNeed("model", "llm_model_uuid", "count_tokens"),
    "invoke_rerank": ResourceNeed("model", "rerank_model_uuid", "rerank"),
    "invoke_embedding": ResourceNeed("model", "embedding_model_uuid", "invoke"),
    "call_tool": ResourceNeed("tool", "tool_name", "call"),
    "get_tool_detail": ResourceNeed("tool", "tool_name", "detail"),
    "retrieve_knowledge": ResourceNeed("knowledge_base", "kb_id", "retrieve"),
    "retrieve_knowledge_base": ResourceNeed("knowledge_base", "kb_id", "retrieve"),
    "reply_stream": ApiNeed("reply_stream"),
    **dict.fromkeys(BOX_ACTIONS, ApiNeed("box")),
}
