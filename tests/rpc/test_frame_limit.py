"""Frames above the 16 MiB limit are refused by every transport before they are kept.

Stdio (plain lines and chunk-framed messages) and the in-memory pair answer the
request with ``message_too_large`` and stay up; a WebSocket cannot skip a frame, so
it is closed with code 1009 and the reader reports ``message_too_large``. A frame of
exactly the limit passes everywhere.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncGenerator
from typing import Any

import anyio
import pytest

from langbot_plugin.rpc import MessageTooLargeError, RequestContext, Route, RouteTable, RPCSession
from langbot_plugin.rpc.transport import DEFAULT_MAX_MESSAGE_BYTES, Transport
from tests.conftest import pipe_link, raw_exchange

pytestmark = pytest.mark.anyio

LIMIT = DEFAULT_MAX_MESSAGE_BYTES


def request_of(size: int, seq_id: int = 41) -> tuple[str, int]:
    """A request frame of exactly ``size`` UTF-8 bytes, and the length of its text."""
    empty = json.dumps({"seq_id": seq_id, "action": "size", "data": {"x": ""}})
    n = size - len(empty)
    frame = json.dumps({"seq_id": seq_id, "action": "size", "data": {"x": "y" * n}})
    assert len(frame.encode()) == size
    return frame, n


def routes() -> RouteTable:
    async def size(ctx: RequestContext) -> dict[str, Any]:
        return {"n": len(ctx.data["x"])}

    return RouteTable(size=Route(size))


async def still_up(raw: Transport) -> None:
    reply = await raw_exchange(raw, '{"seq_id": 42, "action": "__ping", "data": {}}')
    assert reply["data"] == {"message": "pong"}


@contextlib.asynccontextmanager
async def plain_lines() -> AsyncGenerator[tuple[Transport, Transport]]:
    async with pipe_link(frame_threshold=None) as pair:
        yield pair


async def test_a_frame_of_exactly_the_limit_passes(link: tuple[Transport, Transport]) -> None:
    raw, server_t = link
    async with RPCSession(server_t, routes(), name="server").running():
        frame, n = request_of(LIMIT)
        reply = await raw_exchange(raw, frame)
        assert (reply["seq_id"], reply["code"], reply["data"]) == (41, 0, {"n": n})


async def test_a_frame_over_the_limit_is_refused(
    link_kind: str, link: tuple[Transport, Transport]
) -> None:
    raw, server_t = link
    async with RPCSession(server_t, routes(), name="server").running() as server:
        frame, _ = request_of(LIMIT + 1)
        if link_kind in ("memory", "pipes"):  # pipes: chunk-framed above 1 KiB
            reply = await raw_exchange(raw, frame)
            assert (reply["seq_id"], reply["code"]) == (41, 1)
            assert reply["data"]["error_code"] == "message_too_large"
            await still_up(raw)
            return
        # a WebSocket is closed by the side that refused (1009), which the reader reports
        with contextlib.suppress(anyio.BrokenResourceError):
            await raw.send.send(frame)
        with anyio.fail_after(30):
            item = await raw.receive.receive()
            assert isinstance(item, MessageTooLargeError), item
            assert "(1009, message too big)" in item.message
            with pytest.raises(anyio.EndOfStream):
                await raw.receive.receive()
            await server.wait_closed()


async def test_a_plain_line_over_the_limit_is_skipped_and_answered() -> None:
    async with (
        plain_lines() as (raw, server_t),
        RPCSession(server_t, routes(), name="server").running(),
    ):
        reply = await raw_exchange(raw, request_of(LIMIT + 1 + 3 * 256 * 1024)[0])
        assert (reply["seq_id"], reply["data"]["error_code"]) == (41, "message_too_large")
        assert reply["data"]["details"]["limit"] == LIMIT
        await still_up(raw)
        # what followed the skipped line on the pipe is read normally
        frame, n = request_of(1000, seq_id=43)
        assert (await raw_exchange(raw, frame))["data"] == {"n": n}


@pytest.mark.parametrize("framing", ["plain lines", "chunked"])
async def test_the_stdio_reader_itself_refuses_and_names_the_request(framing: str) -> None:
    """The text of an oversized frame never reaches the session: the reader hands over
    an error item (with the seq_id it read from the frame's head) instead."""
    threshold = None if framing == "plain lines" else 1024
    async with pipe_link(frame_threshold=threshold) as (sender, reader):
        frame, _ = request_of(LIMIT + 1)
        follower, _ = request_of(100, seq_id=43)
        refused: object = None
        async with anyio.create_task_group() as tg:
            tg.start_soon(sender.send.send, frame)
            with anyio.fail_after(30):
                refused = await reader.receive.receive()
        await sender.send.send(follower)
        with anyio.fail_after(30):
            after = await reader.receive.receive()
    assert isinstance(refused, MessageTooLargeError)
    assert refused.details["seq_id"] == 41
    assert refused.details["request"] is True
    assert after == follower


@pytest.mark.parametrize("framing", ["plain lines", "chunked"])
async def test_an_oversized_answer_fails_the_call_it_answers(framing: str) -> None:
    threshold = None if framing == "plain lines" else 1024
    failure: list[MessageTooLargeError] = []
    async with (
        pipe_link(frame_threshold=threshold) as (client_t, raw),
        RPCSession(client_t, RouteTable(), name="client").running() as client,
        anyio.create_task_group() as tg,
    ):

        async def call() -> None:
            try:
                await client.call("size", {}, timeout=600)
            except MessageTooLargeError as exc:
                failure.append(exc)

        tg.start_soon(call)
        with anyio.fail_after(30):
            request = json.loads(str(await raw.receive.receive()))
            answer = {"seq_id": request["seq_id"], "code": 0, "message": "success", "data": {}}
            answer["data"] = {"x": "y" * LIMIT}
            await raw.send.send(json.dumps(answer))
    # the call failed at once instead of waiting for its 600 s timeout
    assert len(failure) == 1
    assert failure[0].details["limit"] == LIMIT
