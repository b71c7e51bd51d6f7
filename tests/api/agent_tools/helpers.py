"""A run API wired to a host peer over RPC, and MCP clients from the ``mcp`` package."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from langbot_plugin.api.agent_tools.external_tools import AgentRunExternalTools
from langbot_plugin.api.entities.builtin.agent_runner import AgentRunContext
from langbot_plugin.api.proxies.agent_run import AgentRunAPIProxy
from tests.api.helpers import HostPeer, connected
from tests.api.runs import run_context

HISTORY = {"items": [], "has_more": False}


def _echo(data: dict[str, Any]) -> dict[str, Any]:
    return {"result": {"echo": data["parameters"]}}


ANSWERS: dict[str, Any] = {
    "call_tool": _echo,
    "get_tool_detail": {"tool": {"name": "t", "description": "d", "parameters": {}}},
    "retrieve_knowledge_base": {"results": [{"id": "doc", "content": [], "metadata": {}}]},
    "history_page": HISTORY,
}


@dataclass
class Run:
    """A run's context, its API proxy and the host peer behind it."""

    ctx: AgentRunContext
    api: AgentRunAPIProxy
    peer: HostPeer

    def tools(self) -> AgentRunExternalTools:
        return AgentRunExternalTools(self.api, self.ctx)


@asynccontextmanager
async def running(
    ctx: AgentRunContext | None = None,
    *,
    answers: Mapping[str, Any] | None = None,
) -> AsyncGenerator[Run]:
    """A run API proxy whose calls reach a scripted host over a real RPC session."""
    peer = HostPeer(answers={**ANSWERS, **(answers or {})})
    async with connected(peer) as session:
        context = ctx or run_context()
        api = AgentRunAPIProxy(context, session)
        yield Run(context, api, peer)


@asynccontextmanager
async def http_client(url: str, headers: Mapping[str, str] | None = None) -> AsyncGenerator[Any]:
    """An initialized ``mcp`` client session over streamable HTTP (either ``mcp`` line)."""
    from langbot_plugin.api.agent_tools._mcp_compat import MCP_MAJOR

    if MCP_MAJOR() >= 2:
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        async with (
            httpx2.AsyncClient(headers=dict(headers or {})) as http,
            Client(streamable_http_client(url, http_client=http), cache=None) as client,
        ):
            yield client
        return
    from langbot_plugin.api.agent_tools._mcp_compat import _v1_session, _v1_streams

    async with (
        _v1_streams(url, headers or {}, 30.0) as (read, write),
        _v1_session(read, write, 30.0) as session,
    ):
        started = await session.initialize()
        session.server_info = started.serverInfo  # what 2.x's Client exposes
        yield session


@asynccontextmanager
async def stdio_client(command: str, args: list[str], env: dict[str, str]) -> AsyncGenerator[Any]:
    """An initialized ``mcp`` client session to a stdio server (same API on both lines)."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters
    from mcp.client.stdio import stdio_client as open_stdio

    params = StdioServerParameters(command=command, args=args, env=env)
    async with open_stdio(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def structured(result: Any) -> Any:
    """A tool result's structured content (``structured_content`` on 2.x, camelCase on 1.x)."""
    return getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)


def errored(result: Any) -> bool:
    """Whether a tool result is an error (``is_error`` on 2.x, ``isError`` on 1.x)."""
    return bool(getattr(result, "is_error", None) or getattr(result, "isError", None))


def tool_names(listed: Any) -> set[str]:
    return {tool.name for tool in listed.tools}


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)
