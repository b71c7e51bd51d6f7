"""The reference's MCP helper names, answered by the ``mcp`` package's own server.

A real ``mcp`` client session talks to :func:`handle_mcp_message` over memory streams;
the other faces are called with the shapes the reference's callers pass; malformed
input gets JSON-RPC errors; the gateway's body limit holds on a real socket.
"""

from __future__ import annotations

import io
import json
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.to_thread
import pytest

from langbot_plugin.api.agent_tools import asset_gateway, mcp_bridge, mcp_protocol, mcp_stdio
from langbot_plugin.api.agent_tools._mcp_compat import MCP_MAJOR, handshake_versions
from langbot_plugin.api.agent_tools.asset_gateway import MAX_HTTP_MCP_BODY_BYTES, AgentAssetGateway
from langbot_plugin.api.agent_tools.mcp_bridge import AgentRunMCPBridge
from langbot_plugin.api.agent_tools.mcp_protocol import (
    MCPMethodNotFoundError,
    MCPRequestError,
    handle_mcp_message,
    handle_mcp_message_sync,
    handle_mcp_payload,
    handle_mcp_payload_sync,
    handle_mcp_tool_method,
    handle_mcp_tool_method_sync,
    initialize_result,
    jsonrpc_error,
    jsonrpc_result,
)
from tests.api.agent_tools.helpers import errored, running, structured, text_of, tool_names

pytestmark = pytest.mark.anyio

ECHO = {"name": "echo", "description": "says it back", "inputSchema": {"type": "object"}}
INFO = {"name": "faces-test", "version": "9.9"}


class Echo:
    """An async resolver with one tool."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def list_tools(self) -> list[dict[str, Any]]:
        return [ECHO]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((name, arguments))
        return {"content": [{"type": "text", "text": json.dumps(arguments, sort_keys=True)}]}


class SyncEcho:
    """The same with blocking methods."""

    def list_tools(self) -> list[dict[str, Any]]:
        return [ECHO]

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": f"{name}:{arguments}"}]}


def request(message_id: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": message_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def _wire(message: Any) -> dict[str, Any]:
    inner = getattr(message, "root", message)  # 1.x wraps the union in a RootModel
    return inner.model_dump(by_alias=True, mode="json", exclude_none=True)


def _parsed(answer: dict[str, Any]) -> Any:
    from mcp import types

    if MCP_MAJOR() >= 2:
        return types.jsonrpc_message_adapter.validate_python(answer)
    # mcp 1.x (a RootModel there; the union of 2.x is what this venv's stubs describe)
    return types.JSONRPCMessage.model_validate(answer)  # pyright: ignore[reportAttributeAccessIssue]


@asynccontextmanager
async def client_over_faces(resolver: Any) -> AsyncGenerator[tuple[Any, Any]]:
    """An initialized ``mcp.ClientSession`` whose every message is answered by
    :func:`handle_mcp_message`, with its ``initialize`` answer."""
    from mcp import ClientSession
    from mcp.shared.message import SessionMessage

    to_server_send, to_server = anyio.create_memory_object_stream[Any](16)
    to_client_send, to_client = anyio.create_memory_object_stream[Any](16)

    async def serve() -> None:
        async with to_server, to_client_send:
            async for item in to_server:
                answer = await handle_mcp_message(
                    _wire(item.message), resolver, server_info=INFO, instructions="be brief"
                )
                if answer is not None:
                    await to_client_send.send(SessionMessage(_parsed(answer)))

    async with anyio.create_task_group() as tg:
        tg.start_soon(serve)
        async with (
            to_server_send,
            to_client,
            ClientSession(to_client, to_server_send) as session,
        ):
            yield session, await session.initialize()
        tg.cancel_scope.cancel()


async def test_a_client_session_speaks_to_handle_mcp_message() -> None:
    resolver = Echo()
    async with client_over_faces(resolver) as (session, info):
        server_info = getattr(info, "server_info", None) or info.serverInfo
        listed = await session.list_tools()
        called = await session.call_tool("echo", {"word": "hi"})
        await session.send_ping()
    assert (server_info.name, server_info.version) == ("faces-test", "9.9")
    assert info.instructions == "be brief"
    assert tool_names(listed) == {"echo"}
    assert text_of(called) == '{"word": "hi"}'
    assert errored(called) is False
    assert resolver.calls == [("echo", {"word": "hi"})]


@pytest.mark.parametrize(
    "message",
    [
        5,
        "tools/list",
        None,
        {},
        {"foo": 1},
        {"id": 2, "method": "tools/list"},
        [request(1, "ping")],
    ],
)
async def test_malformed_messages_get_a_json_rpc_error(message: Any) -> None:
    answer = await handle_mcp_message(message, Echo())
    assert answer is not None
    assert answer["jsonrpc"] == "2.0"
    assert isinstance(answer["error"]["code"], int)
    assert answer["error"]["message"]


async def test_unknown_methods_and_invalid_params_are_the_servers_errors() -> None:
    from mcp.types import INVALID_PARAMS, METHOD_NOT_FOUND

    resolver = Echo()
    unserved = await handle_mcp_message(request(6, "resources/list"), resolver)
    unknown = await handle_mcp_message(request(7, "resources/teleport"), resolver)
    nameless = await handle_mcp_message(request(8, "tools/call", {"arguments": {}}), resolver)
    notified = await handle_mcp_message(
        {"jsonrpc": "2.0", "method": "notifications/initialized"}, resolver
    )
    assert unknown is not None
    assert nameless is not None
    assert unserved is not None
    assert (unserved["id"], unserved["error"]["code"]) == (6, METHOD_NOT_FOUND)
    # 2.x knows a method it has no type for is not found; 1.x cannot parse it
    expected = METHOD_NOT_FOUND if MCP_MAJOR() >= 2 else INVALID_PARAMS
    assert (unknown["id"], unknown["error"]["code"]) == (7, expected)
    assert (nameless["id"], nameless["error"]["code"]) == (8, INVALID_PARAMS)
    assert notified is None
    assert resolver.calls == []


async def test_a_batch_is_answered_item_by_item() -> None:
    from mcp.types import INVALID_REQUEST

    batch = [
        request(1, "ping"),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        request(2, "tools/list"),
        "junk",
    ]
    answers = await handle_mcp_payload(batch, Echo())
    # the unreadable item's id: null on 2.x, "server-error" on 1.x (each line's own answer)
    assert [a.get("id") for a in answers[:2]] == [1, 2]
    assert answers[0]["result"] == {}
    assert answers[1]["result"]["tools"][0]["name"] == "echo"
    assert "error" in answers[2]
    empty = await handle_mcp_payload([], Echo())
    assert empty["error"]["code"] == INVALID_REQUEST
    only_notes = await handle_mcp_payload(
        [{"jsonrpc": "2.0", "method": "notifications/initialized"}], Echo()
    )
    assert only_notes is None


async def test_handle_mcp_tool_method_returns_the_result_or_raises() -> None:
    from mcp.types import INVALID_PARAMS

    resolver = Echo()
    listed = await handle_mcp_tool_method("tools/list", {}, resolver)
    called = await handle_mcp_tool_method(
        "tools/call", {"name": "echo", "arguments": {"n": 1}}, resolver
    )
    assert [t["name"] for t in listed["tools"]] == ["echo"]
    assert called["content"][0]["text"] == '{"n": 1}'
    with pytest.raises(MCPMethodNotFoundError) as unknown:
        await handle_mcp_tool_method("tools/teleport", {}, resolver)
    assert unknown.value.details["method"] == "tools/teleport"
    with pytest.raises(MCPRequestError) as invalid:
        await handle_mcp_tool_method("tools/call", {"arguments": {}}, resolver)
    assert invalid.value.mcp_code == INVALID_PARAMS
    assert not isinstance(invalid.value, MCPMethodNotFoundError)


def test_the_shapes_are_the_packages_models() -> None:
    from mcp.types import InitializeResult

    assert jsonrpc_result(3, {"tools": []}) == {"jsonrpc": "2.0", "id": 3, "result": {"tools": []}}
    assert jsonrpc_error(4, -32601, "Method not found") == {
        "jsonrpc": "2.0",
        "id": 4,
        "error": {"code": -32601, "message": "Method not found"},
    }
    assert jsonrpc_error(None, -32700, "Parse error")["id"] is None
    asked = initialize_result(
        {"protocolVersion": "2025-06-18"}, server_info=INFO, instructions="hello"
    )
    assert asked["protocolVersion"] == "2025-06-18"
    assert asked["capabilities"] == {"tools": {"listChanged": False}}
    assert asked["serverInfo"] == INFO
    assert asked["instructions"] == "hello"
    InitializeResult.model_validate(asked)
    accepted, fallback = handshake_versions()
    assert (
        initialize_result({"protocolVersion": "1999-01-01"}, server_info=INFO)["protocolVersion"]
        == fallback
    )
    assert fallback in accepted
    assert "instructions" not in initialize_result({}, server_info=INFO)


def test_the_sync_twins_run_blocking_resolvers() -> None:
    listed = handle_mcp_message_sync(request(1, "tools/list"), SyncEcho(), server_info=INFO)
    batch = handle_mcp_payload_sync(
        [request(1, "ping"), request(2, "tools/call", {"name": "echo", "arguments": {"a": 1}})],
        SyncEcho(),
    )
    called = handle_mcp_tool_method_sync("tools/call", {"name": "echo"}, SyncEcho())
    assert listed is not None
    assert listed["result"]["tools"][0]["name"] == "echo"
    assert [a["id"] for a in batch] == [1, 2]
    assert batch[1]["result"]["content"][0]["text"] == "echo:{'a': 1}"
    assert called["content"][0]["text"] == "echo:{}"
    with pytest.raises(MCPMethodNotFoundError):
        handle_mcp_tool_method_sync("nope", {}, SyncEcho())


async def test_a_sync_twin_answers_inside_a_running_loop() -> None:
    # as the reference's: it blocks this loop until answered (the tools run elsewhere)
    answer = handle_mcp_payload_sync(
        request(1, "tools/call", {"name": "echo", "arguments": {"a": 1}}), SyncEcho()
    )
    assert answer["result"]["content"][0]["text"] == "echo:{'a': 1}"
    empty = handle_mcp_payload_sync([], SyncEcho())
    assert empty == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Invalid request"},  # the reference's words
    }


def test_the_names_sit_where_the_reference_put_them() -> None:
    assert mcp_bridge.handle_mcp_payload is mcp_protocol.handle_mcp_payload
    assert mcp_bridge.handle_mcp_tool_method is mcp_protocol.handle_mcp_tool_method
    assert mcp_bridge.MCPMethodNotFoundError is MCPMethodNotFoundError
    assert asset_gateway.handle_mcp_payload_sync is handle_mcp_payload_sync
    assert MAX_HTTP_MCP_BODY_BYTES == 1024 * 1024
    assert mcp_stdio.SERVER_INFO == mcp_bridge.MCP_SERVER_INFO


async def test_the_bridge_answers_mcp_methods_by_name() -> None:
    async with running() as run:
        bridge = AgentRunMCPBridge(run.tools())
        listed = await bridge.handle_mcp_method("tools/list", {})
        called = await bridge.handle_mcp_method(
            "tools/call", {"name": "langbot_call_tool", "arguments": {"tool_name": "t"}}
        )
        with pytest.raises(ValueError, match="Unsupported MCP bridge method: tools/teleport"):
            await bridge.handle_mcp_method("tools/teleport", {})
        batch = await bridge.handle_http_mcp_request([request(1, "ping"), request(2, "ping")])
    assert "langbot_call_tool" in {t["name"] for t in listed["tools"]}
    assert called["structuredContent"] == {"echo": {}}
    assert [a["id"] for a in batch] == [1, 2]
    assert run.peer.actions() == ["call_tool"]


@asynccontextmanager
async def gateway_serving() -> AsyncGenerator[AgentAssetGateway]:
    gateway = AgentAssetGateway()
    gateway.start()
    try:
        yield gateway
    finally:
        await gateway.aclose()


async def test_the_gateway_answers_in_process_from_another_thread() -> None:
    async with running() as run, gateway_serving() as gateway:
        registration = gateway.register_run(run.api, run.ctx)

        def ask(payload: Any, token: str = "") -> Any:
            return gateway.handle_http_mcp_request(payload, header_token=token)

        scoped = await anyio.to_thread.run_sync(ask, request(1, "tools/list"), registration.token)
        catalogue = await anyio.to_thread.run_sync(ask, request(2, "tools/list"))
        call = request(3, "tools/call", {"name": "langbot_call_tool", "arguments": {}})
        call["params"]["arguments"] = {"tool_name": "t", "run_token": registration.token}
        named = await anyio.to_thread.run_sync(ask, call)
        unknown = await anyio.to_thread.run_sync(ask, request(4, "tools/list"), "forged")
        # on the gateway's own loop (which runs the tools): what needs no tool answers,
        # a tool call answers an error result instead of waiting on itself
        on_loop = ask(request(5, "tools/list"), registration.token)
        call["id"] = 6
        call["params"]["arguments"]["run_token"] = "expired"
        refused = ask(call)
        call["id"] = 7
        call["params"]["arguments"]["run_token"] = registration.token
        would_wait = ask(call)
    scoped_names = {t["name"] for t in scoped["result"]["tools"]}
    catalogue_names = {t["name"] for t in catalogue["result"]["tools"]}
    assert scoped_names < catalogue_names
    assert named["result"]["structuredContent"] == {"echo": {}}
    assert (unknown["id"], "error" in unknown) == (4, True)
    assert {t["name"] for t in on_loop["result"]["tools"]} == scoped_names
    assert refused["result"]["isError"] is True
    assert "run_token" in refused["result"]["content"][0]["text"]
    assert would_wait["result"]["isError"] is True
    assert "own event loop" in would_wait["result"]["content"][0]["text"]
    assert run.peer.actions() == ["call_tool"]
    assert "run_token" not in run.peer.last("call_tool")["parameters"]


async def test_the_gateway_counts_requests_in_flight() -> None:
    seen: list[int] = []
    gateway_box: list[AgentAssetGateway] = []

    async def slow_call(data: dict[str, Any]) -> dict[str, Any]:
        seen.append(gateway_box[0].active_handler_count)
        return {"result": {"echo": data["parameters"]}}

    from tests.api.agent_tools.helpers import http_client

    async with running(answers={"call_tool": slow_call}) as run, gateway_serving() as gateway:
        gateway_box.append(gateway)
        assert gateway.active_handler_count == 0
        registration = gateway.register_run(run.api, run.ctx)
        config = registration.mcp_server()
        async with http_client(config.url, config.headers) as client:
            called = await client.call_tool("langbot_call_tool", {"tool_name": "t"})
    assert structured(called) == {"echo": {}}
    assert seen == [1]


async def test_the_gateway_refuses_a_body_over_the_limit_and_stays_up() -> None:
    import aiohttp

    listing = json.dumps(request(1, "tools/list")).encode()
    padded = json.dumps({**request(2, "tools/list"), "pad": "x" * MAX_HTTP_MCP_BODY_BYTES})
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

    async def chunked() -> AsyncGenerator[bytes]:
        for start in range(0, len(padded), 65536):
            yield padded[start : start + 65536].encode()

    async with gateway_serving() as gateway, aiohttp.ClientSession() as http:
        url = gateway.http_mcp_endpoint
        async with http.post(url, data=io.BytesIO(padded.encode()), headers=headers) as declared:
            declared_status, declared_body = declared.status, await declared.json()
        async with http.post(url, data=chunked(), headers=headers) as streamed:
            streamed_status = streamed.status
        async with http.post(url, data=listing, headers=headers) as fine:
            fine_status, fine_body = fine.status, await fine.json()
        async with http.post(url, data=b"{not json", headers=headers) as broken:
            broken_status, broken_body = broken.status, await broken.json()
    assert declared_status == 413
    assert "1048576" in declared_body["error"]
    assert streamed_status == 413
    assert fine_status == 200
    assert "langbot_call_tool" in {t["name"] for t in fine_body["result"]["tools"]}
    assert broken_status in (200, 400)
    assert "error" in broken_body


async def test_the_gateway_serves_a_plain_json_rpc_post() -> None:
    # no Accept header, no Content-Type, a sparse initialize: what the reference served
    import aiohttp

    async with gateway_serving() as gateway, aiohttp.ClientSession() as http:
        url = gateway.http_mcp_endpoint
        answers: list[tuple[int, Any]] = []
        for message in (
            request(1, "initialize", {"protocolVersion": "2025-06-18"}),
            request(2, "tools/list"),
        ):
            body = json.dumps(message).encode()
            async with http.post(url, data=body, skip_auto_headers=["Content-Type"]) as answer:
                answers.append((answer.status, await answer.json()))
    assert [status for status, _ in answers] == [200, 200]
    assert answers[0][1]["result"]["serverInfo"]["name"]
    assert "langbot_call_tool" in {t["name"] for t in answers[1][1]["result"]["tools"]}


async def test_the_stdio_face_answers_a_message_through_the_bridge() -> None:
    async with running() as run, AgentRunMCPBridge(run.tools()) as bridge:

        def ask(message: Any) -> Any:
            return mcp_stdio.handle_message(
                message, endpoint=bridge.endpoint, token=bridge.token, timeout=30
            )

        started = await anyio.to_thread.run_sync(ask, request(1, "initialize", _client_hello()))
        listed = await anyio.to_thread.run_sync(ask, request(2, "tools/list"))
        called = await anyio.to_thread.run_sync(
            ask,
            request(
                3, "tools/call", {"name": "langbot_call_tool", "arguments": {"tool_name": "t"}}
            ),
        )
        note = await anyio.to_thread.run_sync(
            ask, {"jsonrpc": "2.0", "method": "notifications/initialized"}
        )
        wrong = mcp_stdio.handle_message
        refused = await anyio.to_thread.run_sync(
            lambda: wrong(request(4, "tools/list"), endpoint=bridge.endpoint, token="x", timeout=30)
        )
    assert started["result"]["serverInfo"] == mcp_stdio.SERVER_INFO
    assert "langbot_call_tool" in {t["name"] for t in listed["result"]["tools"]}
    assert called["result"]["structuredContent"] == {"echo": {}}
    assert note is None
    assert refused is not None
    assert "error" in refused
    assert run.peer.actions() == ["call_tool"]


def _client_hello() -> dict[str, Any]:
    return {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    }
