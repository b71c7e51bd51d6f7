"""Frames written in one event-loop turn reach the socket or pipe in one write
(:mod:`langbot_plugin.rpc.turn_batch`, issue 22): in order and whole, a lone frame at
once, the writer held back by a reader that does not read (what is held bounded),
and a cancelled writer never cuts the stream.

The write counts are read through a pass-through wrapper around the real asyncio
transport's ``write`` (every byte still goes to the real socket or pipe)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from langbot_plugin.rpc import RequestContext, Route, RouteTable, RPCSession
from langbot_plugin.rpc.transport import Transport
from langbot_plugin.rpc.transport_stdio import StdioFrameWriter
from langbot_plugin.rpc.transport_ws import WSFrameWriter
from langbot_plugin.rpc.turn_batch import TURN_FLUSH_BYTES
from tests.conftest import pipe_link, websockets_link

pytestmark = pytest.mark.anyio


def count_writes(transport: asyncio.WriteTransport) -> list[int]:
    """The sizes of the writes ``transport`` is given from now on (they still go out)."""
    sizes: list[int] = []
    write: Callable[[Any], None] = transport.write

    def counted(data: Any) -> None:
        sizes.append(len(data))
        write(data)

    transport.write = counted  # type: ignore[method-assign]
    return sizes


def ws_socket(writer: object) -> asyncio.WriteTransport:
    assert isinstance(writer, WSFrameWriter)
    transport: Any = writer._connection.transport  # pyright: ignore[reportPrivateUsage]
    return transport


def pipe_of(writer: object) -> asyncio.WriteTransport:
    assert isinstance(writer, StdioFrameWriter)
    stream: Any = writer._stream  # pyright: ignore[reportPrivateUsage]
    return stream._writer.transport


async def read_frames(transport: Transport, count: int) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    with anyio.fail_after(30):
        for _ in range(count):
            item = await transport.receive.receive()
            assert isinstance(item, str), item
            frames.append(json.loads(item))
    return frames


async def send_in_one_turn(transport: Transport, count: int, payload: str = "") -> None:
    """``count`` frames, each sent by its own task; the tasks all run in one turn."""
    async with anyio.create_task_group() as tg:
        for n in range(count):
            tg.start_soon(transport.send.send, json.dumps({"n": n, "pad": payload}))


@pytest.mark.parametrize("link", [websockets_link, pipe_link], ids=["ws", "pipe"])
async def test_frames_of_one_turn_go_out_in_two_writes_in_order(link: Any) -> None:
    async with link() as (client, server):
        socket = ws_socket(server.send) if link is websockets_link else pipe_of(server.send)
        writes = count_writes(socket)
        await send_in_one_turn(server, 300)
        assert [frame["n"] for frame in await read_frames(client, 300)] == list(range(300))
        # the turn's first frame at once, the other 299 together at the end of the turn
        assert len(writes) == 2, writes


@pytest.mark.parametrize("link", [websockets_link, pipe_link], ids=["ws", "pipe"])
async def test_a_lone_frame_is_written_in_the_call_itself(link: Any) -> None:
    async with link() as (client, server):
        socket = ws_socket(server.send) if link is websockets_link else pipe_of(server.send)
        writes = count_writes(socket)
        async with anyio.create_task_group() as tg:
            tg.start_soon(anyio.sleep, 0)  # another callback in this turn: still at once
            await server.send.send('{"n": 0}')
            assert len(writes) == 1  # before this task yielded to the loop
        assert await read_frames(client, 1) == [{"n": 0}]


@pytest.mark.parametrize("link", [websockets_link, pipe_link], ids=["ws", "pipe"])
async def test_a_reader_that_does_not_read_holds_the_writer_back(link: Any) -> None:
    frame_bytes, count = 256 * 1024, 64  # 16 MiB: more than every buffer on the way
    async with link() as (client, server):
        socket = ws_socket(server.send) if link is websockets_link else pipe_of(server.send)
        done: list[int] = []
        frames: list[dict[str, Any]] = []

        async def send_all() -> None:
            for n in range(count):
                await server.send.send(json.dumps({"n": n, "pad": "x" * frame_bytes}))
                done.append(n)

        async with anyio.create_task_group() as tg:
            tg.start_soon(send_all)
            await anyio.wait_all_tasks_blocked()
            assert len(done) < count  # the writer waits for the reader
            high = socket.get_write_buffer_limits()[1]
            assert socket.get_write_buffer_size() <= high + TURN_FLUSH_BYTES + 2 * frame_bytes
            frames += await read_frames(client, count)
        assert [frame["n"] for frame in frames] == list(range(count))
        assert all(len(frame["pad"]) == frame_bytes for frame in frames)


async def test_writers_cancelled_mid_batch_leave_whole_frames_in_order() -> None:
    async with pipe_link(frame_threshold=None) as (client, server):
        pad = "y" * 40_000
        seen: list[Any] = []
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                for n in range(100):
                    tg.start_soon(server.send.send, json.dumps({"n": n, "pad": pad}))
                await anyio.wait_all_tasks_blocked()  # blocked on the full pipe
                scope.cancel()
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.send.send, json.dumps({"n": "last", "pad": ""}))
            with anyio.fail_after(30):
                while not seen or seen[-1] != "last":
                    item = await client.receive.receive()
                    assert isinstance(item, str), item
                    frame = json.loads(item)  # whole: a cut frame would not parse
                    assert frame["pad"] in (pad, "")
                    seen.append(frame["n"])
        numbers = seen[:-1]
        assert numbers == sorted(numbers)
        assert len(numbers) == len(set(numbers))


async def test_a_text_message_behind_a_queued_one_waits_its_turn() -> None:
    """A binary message is queued for ``recv``; a text message read with it in the same
    data callback must not overtake it through the session's direct path."""
    seen: list[int] = []
    all_seen = anyio.Event()

    async def note(ctx: RequestContext) -> dict[str, Any]:
        seen.append(ctx.data["n"])
        if len(seen) == 40:
            all_seen.set()
        return {}

    def request(n: int) -> bytes:
        return json.dumps({"seq_id": n, "action": "note", "data": {"n": n}}).encode()

    async with websockets_link() as (client, server):
        assert isinstance(client.send, WSFrameWriter)
        connection: Any = client.send._connection  # pyright: ignore[reportPrivateUsage]
        async with RPCSession(server, RouteTable(note=Route(note)), name="server").running():
            for n in range(0, 40, 2):  # a binary message, then a text one, in one write
                connection.protocol.send_binary(request(n))
                connection.protocol.send_text(request(n + 1))
                connection.transport.write(b"".join(connection.protocol.data_to_send()))
                await anyio.lowlevel.checkpoint()
            with anyio.fail_after(30):
                await all_seen.wait()
            assert sorted(frame["seq_id"] for frame in await read_frames(client, 40)) == list(
                range(40)
            )
        assert seen == list(range(40))
