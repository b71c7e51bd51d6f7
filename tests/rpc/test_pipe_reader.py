"""The reading end of a pipe (``rpc.pipe_reader``) and the stdio reader's push path.

Frames read from a pipe reach the session from the data callback (``push_to``); lines
read ahead and bytes read before that was set go first, a line cut by the end of the
stream still comes through ``receive``, the framing rules (oversized lines, chunk
framing) hold the same way, and without a reader the pipe is not read beyond a bound.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

import anyio
import pytest

from langbot_plugin.rpc import MalformedMessageError, MessageTooLargeError
from langbot_plugin.rpc.pipe_reader import PAUSE_BYTES, PipeReader, read_pipe
from langbot_plugin.rpc.transport import ReceivedItem
from langbot_plugin.rpc.transport_stdio import StdioFrameReader

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def pipe() -> AsyncGenerator[tuple[PipeReader, int]]:
    """A pipe read by a :class:`PipeReader`, and its writing descriptor."""
    read_fd, write_fd = os.pipe()
    reader = await read_pipe(read_fd)
    try:
        yield reader, write_fd
    finally:
        await reader.aclose()
        try:
            os.close(write_fd)
        except OSError:
            pass


class Collected:
    """A sink that says when it holds ``n`` items."""

    def __init__(self) -> None:
        self.items: list[ReceivedItem] = []
        self._changed = anyio.Event()

    def __call__(self, item: ReceivedItem) -> None:
        self.items.append(item)
        self._changed.set()

    async def wait_for(self, n: int) -> list[ReceivedItem]:
        with anyio.fail_after(30):
            while len(self.items) < n:
                self._changed = anyio.Event()
                await self._changed.wait()
        return self.items


async def test_read_ahead_lines_and_held_bytes_are_pushed_first_in_order() -> None:
    async with pipe() as (reader, write_fd):
        frames = StdioFrameReader(reader)
        os.write(write_fd, b'{"n":1}\n{"n":2}\n{"n"')
        with anyio.fail_after(30):
            assert await frames.receive() == '{"n":1}'  # reads '{"n":2}' ahead
        os.write(write_fd, b":3}\n")  # read by the loop before or after the push: either way
        got = Collected()
        assert frames.push_to(got)
        os.write(write_fd, b'{"n":4}\n')
        assert await got.wait_for(3) == ['{"n":2}', '{"n":3}', '{"n":4}']


async def test_bytes_a_receive_left_go_to_the_callback_first() -> None:
    async with pipe() as (reader, write_fd):
        os.write(write_fd, b"abcdef")
        with anyio.fail_after(30):
            assert await reader.receive(2) == b"ab"
        chunks: list[bytes] = []
        reader.push_bytes_to(chunks.append)
        assert chunks == [b"cdef"]
        reader.push_bytes_to(None)
        os.write(write_fd, b"gh")
        with anyio.fail_after(30):
            assert await reader.receive() == b"gh"


async def test_a_line_cut_by_the_end_of_the_stream_comes_through_receive() -> None:
    async with pipe() as (reader, write_fd):
        frames = StdioFrameReader(reader)
        got = Collected()
        assert frames.push_to(got)
        os.write(write_fd, b'{"n":1}\n{"last":true}')
        os.close(write_fd)
        with anyio.fail_after(30):
            assert await frames.receive() == '{"last":true}'
            with pytest.raises(anyio.EndOfStream):
                await frames.receive()
        assert got.items == ['{"n":1}']


async def test_pushed_frames_keep_the_framing_rules() -> None:
    async with pipe() as (reader, write_fd):
        frames = StdioFrameReader(reader, max_message_bytes=64)
        got = Collected()
        assert frames.push_to(got)
        oversized = b'{"seq_id": 7, "action": "echo", "data": {"t": "' + b"x" * 200 + b'"}}\n'
        chunked = b"".join(
            json.dumps(line).encode() + b"\n"
            for line in (
                {"type": "chunk_start", "total_size": 10},
                {"type": "chunk_data", "data": '{"a":', "offset": 0},
                {"type": "chunk_data", "data": '"bc"}', "offset": 5},
                {"type": "chunk_end"},
            )
        )
        os.write(write_fd, oversized + b"\xff\xfe\n" + chunked + b'{"ok":1}\n')
        too_large, not_utf8, reassembled, plain = await got.wait_for(4)
    assert isinstance(too_large, MessageTooLargeError)
    assert too_large.details["seq_id"] == 7
    assert isinstance(not_utf8, MalformedMessageError)
    assert (reassembled, plain) == ('{"a":"bc"}', '{"ok":1}')


async def test_an_unread_pipe_is_not_read_beyond_a_bound() -> None:
    async with pipe() as (reader, write_fd):
        os.set_blocking(write_fd, False)
        line = b"y" * 1023 + b"\n"
        written = 0
        with anyio.fail_after(60):
            while not reader.paused:
                try:
                    written += os.write(write_fd, line)
                except BlockingIOError:  # the pipe is full: the loop reads it, or pauses
                    with anyio.move_on_after(0.05):
                        await anyio.wait_writable(write_fd)
                assert written < 8 * PAUSE_BYTES
        assert written > PAUSE_BYTES
        os.close(write_fd)
        received = bytearray()
        with anyio.fail_after(30):
            while True:
                try:
                    received += await reader.receive(100_000)
                except anyio.EndOfStream:
                    break
        assert bytes(received) == line * (written // len(line)) + line[: written % len(line)]
