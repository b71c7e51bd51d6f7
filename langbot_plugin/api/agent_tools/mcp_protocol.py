"""MCP helpers around a tool surface, on the official ``mcp`` package.

The reference SDK answered JSON-RPC by hand here; this module keeps its public names
that make sense on top of ``mcp``: the resolver protocol and its adapter for
:class:`~langbot_plugin.api.agent_tools.external_tools.AgentRunExternalTools`, the
error shapes, and :func:`handle_mcp_payload`, which runs one JSON-RPC payload through
a real ``mcp`` server in process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from langbot_plugin.api.agent_tools._server import (
    answer_in_process,
    build_mcp_server,
    surface_from_scope,
)
from langbot_plugin.api.agent_tools.external_tools import mcp_error_result

if TYPE_CHECKING:
    from langbot_plugin.api.agent_tools.external_tools import AgentRunExternalTools

__all__ = [
    "DEFAULT_MCP_PROTOCOL_VERSION",
    "AgentToolsMCPResolver",
    "MCPToolResolver",
    "handle_mcp_payload",
    "jsonrpc_error",
    "mcp_tool_error",
]

#: The handshake-era protocol version the reference assumed when a client named none.
DEFAULT_MCP_PROTOCOL_VERSION = "2025-06-18"


class MCPToolResolver(Protocol):
    """An MCP tool surface: ``tools/list`` entries and ``tools/call`` results as wire
    dicts."""

    async def list_tools(self) -> list[dict[str, Any]]: ...

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]: ...


class AgentToolsMCPResolver:
    """:class:`MCPToolResolver` over an ``AgentRunExternalTools`` (the run's granted
    tools; ``include_run_token`` adds the optional ``run_token`` argument to each)."""

    def __init__(self, tools: AgentRunExternalTools, *, include_run_token: bool = False) -> None:
        self.tools = tools
        self.include_run_token = include_run_token

    async def list_tools(self) -> list[dict[str, Any]]:
        return self.tools.mcp_tools(include_run_token=self.include_run_token)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return await self.tools.call_mcp_tool(name, arguments)


def mcp_tool_error(message: str) -> dict[str, Any]:
    """A failed ``tools/call`` result with ``message`` as its text."""
    return mcp_error_result(message)


def jsonrpc_error(message_id: Any, code: int, message: str) -> dict[str, Any]:
    """A JSON-RPC error response (built with ``mcp``'s own model)."""
    from mcp.types import ErrorData, JSONRPCError

    data = ErrorData(code=code, message=message)
    if message_id is None:
        # an unreadable request has no id: JSON-RPC answers with ``id: null``, which the
        # 1.x models do not accept (2.x does); the fields are still the package's
        error = JSONRPCError.model_construct(jsonrpc="2.0", id=None, error=data)
        return {**error.model_dump(by_alias=True, mode="json", exclude_none=True), "id": None}
    error = JSONRPCError(jsonrpc="2.0", id=message_id, error=data)
    return error.model_dump(by_alias=True, mode="json", exclude_none=True)


async def handle_mcp_payload(
    payload: Any,
    resolver: MCPToolResolver,
    *,
    server_info: dict[str, Any] | None = None,
    instructions: str | None = None,
    headers: dict[str, str] | None = None,
) -> Any:
    """The JSON-RPC answer of an MCP server over ``resolver`` to ``payload`` (a
    request, notification or invalid message): a response dict, or ``None`` when
    there is nothing to answer (a notification)."""
    info = server_info or {}
    server = build_mcp_server(
        surface_from_scope,
        name=str(info.get("name") or "langbot-agent"),
        version=str(info.get("version") or "0.1.0"),
        instructions=instructions,
    )
    answer = await answer_in_process(server, resolver, payload, headers=headers)
    return answer.json()
