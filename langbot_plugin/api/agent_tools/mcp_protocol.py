"""MCP helpers around a tool surface, on the official ``mcp`` package.

The reference SDK answered MCP JSON-RPC by hand here; this module keeps its public
names and signatures (:func:`handle_mcp_message`, :func:`handle_mcp_payload`,
:func:`handle_mcp_tool_method`, their ``*_sync`` twins over a
:class:`SyncMCPToolResolver`, and the shapes :func:`jsonrpc_result`,
:func:`jsonrpc_error`, :func:`initialize_result`, :func:`mcp_tool_error`), and every
message goes through the real low-level ``Server`` the bridge and the gateway serve
(:func:`~langbot_plugin.api.agent_tools._server.build_mcp_server`). How that differs
from the reference: ``docs/agent-runner.md``, "Differences from the reference SDK".
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio
import anyio.to_thread

from langbot_plugin.api.agent_tools._server import (
    answer_in_process,
    build_mcp_server,
    surface_from_scope,
)
from langbot_plugin.api.agent_tools.external_tools import mcp_error_result
from langbot_plugin.rpc.errors import RPCError

if TYPE_CHECKING:
    from langbot_plugin.api.agent_tools.external_tools import AgentRunExternalTools

__all__ = [
    "DEFAULT_MCP_PROTOCOL_VERSION",
    "AgentToolsMCPResolver",
    "MCPMethodNotFoundError",
    "MCPRequestError",
    "MCPToolResolver",
    "SyncMCPToolResolver",
    "answer_payload",
    "handle_mcp_message",
    "handle_mcp_message_sync",
    "handle_mcp_payload",
    "handle_mcp_payload_sync",
    "handle_mcp_tool_method",
    "handle_mcp_tool_method_sync",
    "initialize_result",
    "jsonrpc_error",
    "jsonrpc_result",
    "loop_is_blocked",
    "mcp_tool_error",
]

#: The handshake-era protocol version the reference assumed when a client named none.
DEFAULT_MCP_PROTOCOL_VERSION = "2025-06-18"
_DEFAULT_INFO = {"name": "langbot-agent", "version": "0.1.0"}
_T = TypeVar("_T")


class MCPRequestError(RPCError):
    """An MCP request the server answered with a JSON-RPC error; ``details`` carries
    its ``mcp_code`` (and ``data`` when the server sent some)."""

    code = "mcp_request_error"

    @property
    def mcp_code(self) -> int:
        """The JSON-RPC error code the server answered."""
        return int(self.details.get("mcp_code", 0))


class MCPMethodNotFoundError(MCPRequestError):
    """The MCP server does not serve the method (JSON-RPC ``-32601``)."""

    code = "mcp_method_not_found"


class MCPToolResolver(Protocol):
    """An MCP tool surface: ``tools/list`` entries and ``tools/call`` results as wire
    dicts."""

    async def list_tools(self) -> list[dict[str, Any]]: ...

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]: ...


class SyncMCPToolResolver(Protocol):
    """:class:`MCPToolResolver` with blocking methods (the ``*_sync`` helpers run them
    in worker threads)."""

    def list_tools(self) -> list[dict[str, Any]]: ...

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]: ...


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


class _InWorkerThreads:
    """A sync resolver seen as an async one: each call in a worker thread."""

    def __init__(self, resolver: SyncMCPToolResolver) -> None:
        self._resolver = resolver

    async def list_tools(self) -> list[dict[str, Any]]:
        return await anyio.to_thread.run_sync(self._resolver.list_tools)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return await anyio.to_thread.run_sync(self._resolver.call_tool, name, arguments)


# ---------------------------------------------------------------------- shapes


def _dump(model: Any) -> dict[str, Any]:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def mcp_tool_error(message: str) -> dict[str, Any]:
    """A failed ``tools/call`` result with ``message`` as its text."""
    return mcp_error_result(message)


def jsonrpc_result(message_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    """A JSON-RPC success response (``mcp.types.JSONRPCResponse``)."""
    from mcp.types import JSONRPCResponse

    return _dump(JSONRPCResponse(jsonrpc="2.0", id=message_id, result=result))


def jsonrpc_error(message_id: Any, code: int, message: str) -> dict[str, Any]:
    """A JSON-RPC error response (``mcp.types.JSONRPCError``)."""
    from mcp.types import ErrorData, JSONRPCError

    data = ErrorData(code=code, message=message)
    if message_id is None:
        # an unreadable request has no id: JSON-RPC answers with ``id: null``, which the
        # 1.x models do not accept (2.x does); the fields are still the package's
        error = JSONRPCError.model_construct(jsonrpc="2.0", id=None, error=data)
        return {**_dump(error), "id": None}
    return _dump(JSONRPCError(jsonrpc="2.0", id=message_id, error=data))


def initialize_result(
    params: dict[str, Any],
    *,
    server_info: dict[str, Any],
    instructions: str | None = None,
) -> dict[str, Any]:
    """The ``result`` of ``initialize`` for a client's ``params``
    (``mcp.types.InitializeResult``): the client's protocol version when the ``mcp``
    line negotiates it, else the line's own (the server's rule); tools without list
    change notifications; ``server_info`` as ``serverInfo``."""
    from mcp.types import InitializeResult

    from langbot_plugin.api.agent_tools._mcp_compat import handshake_versions

    accepted, fallback = handshake_versions()
    asked = str(params.get("protocolVersion") or DEFAULT_MCP_PROTOCOL_VERSION)
    wire: dict[str, Any] = {
        "protocolVersion": asked if asked in accepted else fallback,
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {**_DEFAULT_INFO, **server_info},
    }
    if instructions:
        wire["instructions"] = instructions
    return _dump(InitializeResult.model_validate(wire))


# ---------------------------------------------------------------------- answering


def _server_for(server_info: dict[str, Any] | None, instructions: str | None) -> Any:
    info = {**_DEFAULT_INFO, **(server_info or {})}
    return build_mcp_server(
        surface_from_scope,
        name=str(info["name"]),
        version=str(info["version"]),
        instructions=instructions,
    )


async def answer_payload(
    server: Any,
    resolver: MCPToolResolver,
    payload: Any,
    *,
    headers: dict[str, str] | None = None,
) -> Any:
    """``payload`` (a message or a JSON-RPC batch) through ``server`` (a low-level
    ``Server`` built by ``build_mcp_server(surface_from_scope, ...)``) for
    ``resolver``: what :func:`handle_mcp_payload` answers."""
    if not isinstance(payload, list):
        return (await answer_in_process(server, resolver, payload, headers=headers)).json()
    from mcp.types import INVALID_REQUEST

    if not payload:  # the reference's words
        return jsonrpc_error(None, INVALID_REQUEST, "Invalid request")
    answers: list[dict[str, Any]] = []
    for item in payload:  # pyright: ignore[reportUnknownVariableType]
        answer = (await answer_in_process(server, resolver, item, headers=headers)).json()
        if answer is not None:
            answers.append(answer)
    return answers or None


async def handle_mcp_message(
    message: Any,
    resolver: MCPToolResolver,
    *,
    server_info: dict[str, Any] | None = None,
    instructions: str | None = None,
    headers: dict[str, str] | None = None,
) -> dict[str, Any] | None:
    """The answer of an MCP server over ``resolver`` to one JSON-RPC ``message``: a
    response dict (an error one for anything the server cannot read, a list
    included), or ``None`` when there is nothing to answer (a notification, a
    response). ``headers`` may carry the client's ``mcp-*`` HTTP headers."""
    server = _server_for(server_info, instructions)
    answer = await answer_in_process(server, resolver, message, headers=headers)
    return answer.json()


async def handle_mcp_payload(
    payload: Any,
    resolver: MCPToolResolver,
    *,
    server_info: dict[str, Any] | None = None,
    instructions: str | None = None,
    headers: dict[str, str] | None = None,
) -> Any:
    """:func:`handle_mcp_message`, and a JSON-RPC batch (a list) answered item by item:
    the list of answers, ``None`` when none is due, an ``Invalid Request`` error for
    an empty batch."""
    server = _server_for(server_info, instructions)
    return await answer_payload(server, resolver, payload, headers=headers)


async def handle_mcp_tool_method(
    method: str, params: dict[str, Any], resolver: MCPToolResolver
) -> dict[str, Any]:
    """The ``result`` of the MCP request ``method`` with ``params`` (``tools/list``,
    ``tools/call``, ``ping``...) as the server answers it; a JSON-RPC error is raised
    as :class:`MCPMethodNotFoundError` (unknown method) or :class:`MCPRequestError`."""
    from mcp.types import INVALID_PARAMS, METHOD_NOT_FOUND

    from langbot_plugin.api.agent_tools._mcp_compat import unknown_method

    request: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params:
        request["params"] = params
    answer = await handle_mcp_message(request, resolver)
    if answer is None:
        raise MCPRequestError(f"{method}: the MCP server sent no answer")
    if "error" in answer:
        error = answer["error"]
        details: dict[str, Any] = {"mcp_code": error.get("code"), "method": method}
        if error.get("data") not in (None, ""):
            details["data"] = error["data"]
        code = error.get("code")
        if code == INVALID_PARAMS and unknown_method(method):
            code = METHOD_NOT_FOUND  # the 1.x server cannot parse a method it has no type for
        kind = MCPMethodNotFoundError if code == METHOD_NOT_FOUND else MCPRequestError
        raise kind(f"{method}: {error.get('message', '')}", details=details)
    return dict(answer.get("result") or {})


# ---------------------------------------------------------------------- sync twins


#: Event loops a ``*_sync`` call made on them is blocking (see :func:`loop_is_blocked`).
_BLOCKED_LOOPS: set[asyncio.AbstractEventLoop] = set()


def loop_is_blocked(loop: asyncio.AbstractEventLoop | None) -> bool:
    """Whether ``loop`` waits for a ``*_sync`` call made on it: work sent to it would
    never run (the gateway answers such a tool call with an error instead)."""
    return loop is not None and loop in _BLOCKED_LOOPS


def _run_blocking(name: str, call: Callable[[], Coroutine[Any, Any, _T]]) -> _T:
    """Run ``call`` to its end and return its value. Without a running loop, on a new
    one; inside a running loop (as the reference allowed), on a new loop in a helper
    thread while the caller's loop waits: its tools must not need the caller's loop."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return anyio.run(call)
    _BLOCKED_LOOPS.add(loop)
    try:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix=name) as helper:
            return helper.submit(anyio.run, call).result()
    finally:
        _BLOCKED_LOOPS.discard(loop)


def handle_mcp_message_sync(
    message: Any,
    resolver: SyncMCPToolResolver,
    *,
    server_info: dict[str, Any] | None = None,
    instructions: str | None = None,
) -> dict[str, Any] | None:
    """:func:`handle_mcp_message` for a thread without an event loop."""
    return _run_blocking(
        "handle_mcp_message_sync",
        lambda: handle_mcp_message(
            message, _InWorkerThreads(resolver), server_info=server_info, instructions=instructions
        ),
    )


def handle_mcp_payload_sync(
    payload: Any,
    resolver: SyncMCPToolResolver,
    *,
    server_info: dict[str, Any] | None = None,
    instructions: str | None = None,
) -> Any:
    """:func:`handle_mcp_payload` for a thread without an event loop."""
    return _run_blocking(
        "handle_mcp_payload_sync",
        lambda: handle_mcp_payload(
            payload, _InWorkerThreads(resolver), server_info=server_info, instructions=instructions
        ),
    )


def handle_mcp_tool_method_sync(
    method: str, params: dict[str, Any], resolver: SyncMCPToolResolver
) -> dict[str, Any]:
    """:func:`handle_mcp_tool_method` for a thread without an event loop."""
    return _run_blocking(
        "handle_mcp_tool_method_sync",
        lambda: handle_mcp_tool_method(method, params, _InWorkerThreads(resolver)),
    )
