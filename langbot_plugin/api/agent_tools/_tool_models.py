"""Argument models of the built-in run tools, and MCP ``tools/call`` result shapes."""

from __future__ import annotations

import copy
import json
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ASSET_TYPES",
    "AssetType",
    "CallToolArgs",
    "EmptyArgs",
    "GetToolDetailArgs",
    "HistoryPageArgs",
    "ListAssetsArgs",
    "RetrieveKnowledgeArgs",
    "jsonable",
    "mcp_error_result",
    "mcp_result",
    "with_run_token",
]

AssetType = Literal[
    "event", "history", "knowledge_bases", "tools", "platform_tools", "mcp_tools", "skills"
]
ASSET_TYPES: tuple[AssetType, ...] = get_args(AssetType)


class EmptyArgs(BaseModel):
    """No arguments."""

    model_config = ConfigDict(extra="forbid")


class ListAssetsArgs(EmptyArgs):
    """Which kinds of assets to list (all when empty)."""

    asset_types: list[AssetType] = Field(default_factory=list[AssetType])
    include_schemas: bool = False


class HistoryPageArgs(EmptyArgs):
    """A page of the conversation transcript."""

    conversation_id: str | None = None
    before_cursor: str | None = None
    after_cursor: str | None = None
    limit: int = Field(default=50, ge=1, le=100)
    direction: str = Field(default="backward", pattern="^(backward|forward)$")
    include_attachments: bool = False


class RetrieveKnowledgeArgs(EmptyArgs):
    """A query against one granted knowledge base (``query`` is an alias of
    ``query_text``)."""

    kb_id: str
    query_text: str | None = None
    query: str | None = None
    top_k: int = Field(default=5, ge=1, le=20)
    filters: dict[str, Any] = Field(default_factory=dict[str, Any])


class CallToolArgs(EmptyArgs):
    """A call of one granted LangBot tool."""

    tool_name: str
    parameters: dict[str, Any] = Field(default_factory=dict[str, Any])


class GetToolDetailArgs(EmptyArgs):
    """The tool whose description and parameter schema to return."""

    tool_name: str


def jsonable(value: Any) -> Any:
    """``value`` with pydantic models dumped and anything unknown turned into text."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]  # pyright: ignore[reportUnknownVariableType]
    return str(value)


def mcp_result(value: Any) -> dict[str, Any]:
    """A successful MCP ``tools/call`` result: the value as JSON text, and as
    ``structuredContent`` (wrapped in ``{"result": ...}`` unless it is an object)."""
    structured = jsonable(value)
    if not isinstance(structured, dict):
        structured = {"result": structured}
    return {
        "content": [{"type": "text", "text": json.dumps(structured, ensure_ascii=False)}],
        "structuredContent": structured,
    }


def mcp_error_result(message: str, *, code: str | None = None) -> dict[str, Any]:
    """A failed MCP ``tools/call`` result; ``code`` is the run API's stable code."""
    text = f"{code}: {message}" if code else message
    result: dict[str, Any] = {"isError": True, "content": [{"type": "text", "text": text}]}
    if code:
        result["structuredContent"] = {"error": {"code": code, "message": message}}
    return result


def with_run_token(tool: dict[str, Any]) -> dict[str, Any]:
    data = copy.deepcopy(tool)
    schema = data.setdefault("inputSchema", {"type": "object"})
    properties = schema.setdefault("properties", {})
    properties.setdefault(
        "run_token",
        {
            "type": "string",
            "description": "The short-lived LangBot run token; not needed when the MCP "
            "request carries it as an Authorization bearer token.",
        },
    )
    return data
