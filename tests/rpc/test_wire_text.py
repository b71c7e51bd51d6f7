"""The wire's JSON text rule (``rpc.wire_json``) on every transport: a frame holding a
lone surrogate, a non-JSON number or too deep a nesting is refused with a coded error
and the path of the value, nothing unencodable is ever sent, and the connection stays up.

The frames are the minimal ones the wire fuzzer (``tests/fuzz``) found, in the words of
issue 24: each of them once ended ``lbp rt`` or left a traceback.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from langbot_plugin.rpc import (
    MalformedMessageError,
    RequestContext,
    Route,
    RouteTable,
    RPCSession,
    Transport,
)
from langbot_plugin.rpc.envelope import dumps, parse_frame
from langbot_plugin.rpc.transport_stdio import StdioFrameReader
from langbot_plugin.rpc.wire_json import MAX_DEPTH, find_unsendable, loads
from tests.conftest import raw_exchange

pytestmark = pytest.mark.anyio


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


#: (frame text, seq_id, path the refusal names, or its start); answered ``malformed_message``
REFUSED = [
    ('{"seq_id": 1, "action": "echo", "data": {"text": "\\udfff"}}', 1, "data.text"),
    ('{"seq_id": 2, "action": "echo", "data": {"a": ["ok", "\\ud83d"]}}', 2, "data.a[1]"),
    ('{"seq_id": 3, "action": "echo", "data": {"\\udc00": 1}}', 3, "data.\ufffd"),
    ('{"seq_id": 4, "action": "echo", "data": {"x": NaN}}', 4, ""),
    ('{"seq_id": 5, "action": "echo", "data": {"x": -Infinity}}', 5, ""),
    ('{"seq_id": 6, "action": "echo", "data": {"x": 1e999}}', 6, ""),
    ('{"seq_id": 7, "action": "echo", "data": {"x": 18446744073709551616}}', 7, ""),
    ('{"seq_id": 8, "action": "echo", "data": {"x": ' + _deep(MAX_DEPTH) + "}}", 8, "data.x"),
    ('{"seq_id": 9, "action": "echo", "data": {"x": ' + _deep(100_000) + "}}", 9, ""),
    ('{"seq_id": 10, "action": "echo", "data": {}, "context": {"k": "\\udfff"}}', 10, ""),
]


def echo_routes() -> RouteTable:
    async def echo(ctx: RequestContext) -> dict[str, Any]:
        return ctx.data

    async def give(ctx: RequestContext) -> dict[str, Any]:
        # what a plugin might return: text cut inside an emoji, a float gone wrong
        kind = ctx.data["kind"]
        return {"reply": {"text": "\udfff"}} if kind == "surrogate" else {"score": math.nan}

    return RouteTable(echo=Route(echo), give=Route(give))


@pytest.mark.parametrize(("frame", "seq_id", "path"), REFUSED)
async def test_a_frame_outside_the_rule_is_refused_with_its_path(
    link: tuple[Transport, Transport], frame: str, seq_id: int, path: str
) -> None:
    raw, server_t = link
    async with RPCSession(server_t, echo_routes(), name="server").running():
        reply = await raw_exchange(raw, frame)
        assert (reply["seq_id"], reply["code"]) == (seq_id, 1)
        assert reply["data"]["error_code"] == "malformed_message"
        if path:  # the path names the value (and starts with it, for nesting)
            assert reply["data"]["details"]["path"].startswith(path)
        ok = await raw_exchange(raw, '{"seq_id": 99, "action": "echo", "data": {"n": 1}}')
        assert ok["data"] == {"n": 1}


async def test_the_deepest_allowed_frame_and_paired_surrogates_pass(
    link: tuple[Transport, Transport],
) -> None:
    raw, server_t = link
    async with RPCSession(server_t, echo_routes(), name="server").running():
        deep = _deep(MAX_DEPTH - 2)  # the frame and its data are two levels
        frame = (
            '{"seq_id": 1, "action": "echo", "data": {"x": ' + deep + ', "e": "\\ud83d\\ude00"}}'
        )
        reply = await raw_exchange(raw, frame)
        assert reply["code"] == 0
        assert reply["data"]["e"] == "\U0001f600"
        assert json.dumps(reply["data"]["x"]) == deep.replace("][", "], [")


@asynccontextmanager
async def echo_client(link: tuple[Transport, Transport]) -> AsyncGenerator[RPCSession]:
    """A client session whose peer serves :func:`echo_routes`."""
    client_t, server_t = link
    async with (
        RPCSession(client_t, name="client").running() as client,
        RPCSession(server_t, echo_routes(), name="server").running(),
    ):
        yield client


@pytest.mark.parametrize("kind", ["surrogate", "nan"])
async def test_an_answer_outside_the_rule_becomes_a_coded_error(
    link: tuple[Transport, Transport], kind: str
) -> None:
    async with echo_client(link) as client:
        with pytest.raises(MalformedMessageError) as info:
            await client.call("give", {"kind": kind})
        assert info.value.details["path"] == (
            "data.reply.text" if kind == "surrogate" else "data.score"
        )
        assert await client.call("echo", {"after": 1}) == {"after": 1}


async def test_a_call_carrying_a_lone_surrogate_is_refused_before_sending(
    link: tuple[Transport, Transport],
) -> None:
    async with echo_client(link) as client:
        with pytest.raises(MalformedMessageError) as info:
            await client.call("echo", {"items": [{"t": "ok"}, {"t": "\ud800"}]})
        assert info.value.details["path"] == "data.items[1].t"
        assert await client.call("echo", {"after": 1}) == {"after": 1}


async def test_an_answer_outside_the_rule_fails_the_call_at_once(
    link: tuple[Transport, Transport],
) -> None:
    """A peer (a reference plugin, say) that answers with a lone surrogate escape: the
    call fails with the path, it does not wait for its timeout."""
    client_t, raw = link
    async with RPCSession(client_t, name="client").running() as client:
        failures: list[MalformedMessageError] = []
        async with anyio.create_task_group() as tg:

            async def call() -> None:
                with pytest.raises(MalformedMessageError) as info:
                    await client.call("anything", {}, timeout=None)
                failures.append(info.value)

            tg.start_soon(call)
            with anyio.fail_after(30):
                request = json.loads(str(await raw.receive.receive()))
            await raw.send.send(
                f'{{"seq_id": {request["seq_id"]}, "code": 0, "message": "success", "data": {{"t": "\\udfff"}}}}'
            )
        assert failures[0].details["path"] == "data.t"


async def test_a_chunk_framing_line_outside_the_rule_is_refused() -> None:
    """The reference's chunk framing on stdio: a piece holding a lone surrogate."""
    send, receive = anyio.create_memory_object_stream[bytes](10)

    class Bytes(anyio.abc.ByteReceiveStream):
        async def receive(self, max_bytes: int = 65536) -> bytes:
            return await receive.receive()

        async def aclose(self) -> None:
            receive.close()

    reader = StdioFrameReader(Bytes())
    for line in (
        b'{"type":"chunk_start","total_size":20}\n',
        b'{"type":"chunk_data","data":"\\udfff","offset":0}\n',
        b'{"type":"chunk_start","total_size":' + _deep(5000).encode() + b"}\n",
        b'{"seq_id": 5, "action": "echo", "data": {}}\n',
    ):
        await send.send(line)
    first, second, third = [await reader.receive() for _ in range(3)]
    assert isinstance(first, MalformedMessageError)
    assert isinstance(second, MalformedMessageError)
    assert third == '{"seq_id": 5, "action": "echo", "data": {}}'
    send.close()
    receive.close()


def test_the_rule_in_both_directions() -> None:
    assert loads('{"e": "\\ud83d\\ude00", "n": -9223372036854775808}') == {
        "e": "\U0001f600",
        "n": -(2**63),
    }
    with pytest.raises(MalformedMessageError, match="lone surrogate") as info:
        loads('{"a": [{"b": "x\\ud800y"}]}')
    assert info.value.details["path"] == "a[0].b"
    with pytest.raises(MalformedMessageError) as refused:
        dumps({"data": {"v": [1.0, math.inf]}})
    assert refused.value.details["path"] == "data.v[1]"
    problem = find_unsendable({"k": {"\udfff": 1}})
    assert problem is not None
    assert problem.details["path"] == "k.\ufffd"
    frame = parse_frame(b'{"seq_id": 3, "code": 0, "data": {"x": 1}}')
    assert frame.seq_id == 3
    with pytest.raises(MalformedMessageError, match="not UTF-8"):
        parse_frame(b'{"seq_id": 3, "action": "a", "data": {"x": "\xff"}}')
