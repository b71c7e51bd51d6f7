"""The relay's framing rules and its bounded queue, without I/O."""

from __future__ import annotations

import json
import random

import anyio
import pytest

from box_runtime.framing import (
    INVALID_REQUEST,
    PARSE_ERROR,
    FrameError,
    LineFramer,
    MessageQueue,
    Oversized,
    error_frame,
    line_for_process,
    response_id_of,
)

pytestmark = pytest.mark.anyio


def messages(count: int, rng: random.Random) -> list[bytes]:
    sizes = [1, 2, 3, 100, 4095, 4096, 4097, 65535, 65536, 65537, 300_000]
    out: list[bytes] = []
    for index in range(count):
        size = rng.choice(sizes)
        body = json.dumps({"jsonrpc": "2.0", "id": index, "result": {"t": "é" * (size // 2)}})
        out.append(body.encode())
    return out


def chunked(data: bytes, rng: random.Random) -> list[bytes]:
    chunks: list[bytes] = []
    position = 0
    while position < len(data):
        size = rng.choice([1, 2, 7, 512, 4096, 65536, 1 << 20])
        chunks.append(data[position : position + size])
        position += size
    return chunks


@pytest.mark.parametrize("seed", range(6))
def test_lines_come_out_whole_whatever_the_chunking(seed: int) -> None:
    rng = random.Random(seed)
    sent = messages(60, rng)
    stream = b"".join(m + (b"\r\n" if i % 3 == 0 else b"\n") for i, m in enumerate(sent))
    framer = LineFramer()
    got: list[bytes | Oversized] = []
    for chunk in chunked(stream, rng):
        got += framer.feed(chunk)
    got += framer.end()
    assert got == sent


def test_blank_lines_are_not_messages_and_a_last_unterminated_line_is() -> None:
    framer = LineFramer()
    assert framer.feed(b"\n\n  \r\n{}\n\t\n") == [b"{}"]
    assert framer.feed(b'{"a":1}') == []
    assert framer.end() == [b'{"a":1}']
    assert framer.end() == []


def test_an_oversized_line_is_skipped_without_buffering_it() -> None:
    framer = LineFramer(limit=100)
    head = b'{"jsonrpc":"2.0","id":7,"result":"'
    assert framer.feed(b"ok\n" + head) == [b"ok"]
    for _ in range(50):  # 5 000 bytes more, never kept
        assert framer.feed(b"x" * 100) == []
        assert len(framer._buffer) <= 100  # pyright: ignore[reportPrivateUsage]
    items = framer.feed(b'"}\nnext\n')
    assert items[1] == b"next"
    big = items[0]
    assert isinstance(big, Oversized)
    assert big.size == len(head) + 5000 + 2
    assert response_id_of(big.head) == 7
    # Within one chunk as well.
    items = framer.feed(b"y" * 500 + b"\nafter\n")
    assert isinstance(items[0], Oversized)
    assert items[0].size == 500
    assert items[1:] == [b"after"]


def test_an_oversized_unterminated_line_at_the_end() -> None:
    framer = LineFramer(limit=10)
    assert framer.feed(b"z" * 30) == []
    end = framer.end()
    assert len(end) == 1
    assert isinstance(end[0], Oversized)


def test_the_id_of_a_response_is_found_only_at_its_start() -> None:
    assert response_id_of(b'{"jsonrpc": "2.0", "id": 12, "result": {') == 12
    assert response_id_of(b'{"id":"a\\"b","error":{') == 'a"b'
    assert response_id_of(b'{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage"') is None
    notification = b'{"jsonrpc":"2.0","method":"x","params":{"id":5,"result":1}}'
    assert response_id_of(notification) is None
    assert response_id_of(b"garbage") is None


def test_a_client_frame_becomes_exactly_one_line() -> None:
    assert line_for_process('{"a": 1}') == b'{"a": 1}\n'
    pretty = json.dumps({"jsonrpc": "2.0", "id": 1, "params": {"text": "two\nlines"}}, indent=2)
    line = line_for_process(pretty)
    assert line.count(b"\n") == 1
    assert line.endswith(b"\n")
    assert json.loads(line) == json.loads(pretty)
    assert b"\r" not in line_for_process('{\r\n"a": "b"\r\n}')
    assert line_for_process("[1, 2]") == b"[1, 2]\n"
    assert line_for_process('{"t": "é\u2028"}') == '{"t": "é\u2028"}\n'.encode()


def test_frames_the_process_must_not_see_are_refused() -> None:
    with pytest.raises(FrameError) as parse:
        line_for_process('{"a": ')
    assert parse.value.code == PARSE_ERROR
    with pytest.raises(FrameError) as scalar:
        line_for_process("42")
    assert scalar.value.code == INVALID_REQUEST
    big = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "p": "x" * 200})
    with pytest.raises(FrameError) as large:
        line_for_process(big, limit=100)
    assert large.value.code == INVALID_REQUEST
    assert large.value.request_id == 9
    assert "at most 100 bytes" in large.value.message


def test_error_frames_are_json_rpc() -> None:
    frame = json.loads(error_frame(PARSE_ERROR, "bad", None))
    assert frame == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "bad"}}


async def test_the_queue_is_bounded_and_waits_instead_of_dropping() -> None:
    queue: MessageQueue[int] = MessageQueue(max_bytes=10, max_items=100)
    await queue.put(1, 6)
    await queue.put(2, 4)
    put_done = anyio.Event()

    async def third() -> None:
        await queue.put(3, 1)
        put_done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(third)
        await anyio.wait_all_tasks_blocked()
        assert not put_done.is_set()  # full: the producer waits
        assert queue.bytes == 10
        assert await queue.get() == 1
        await put_done.wait()
    assert [await queue.get(), await queue.get()] == [2, 3]


async def test_one_item_larger_than_the_bound_passes_alone() -> None:
    queue: MessageQueue[str] = MessageQueue(max_bytes=10, max_items=100)
    await queue.put("big", 1000)
    assert await queue.get() == "big"


async def test_the_item_count_is_bounded_too() -> None:
    queue: MessageQueue[int] = MessageQueue(max_bytes=1000, max_items=2)
    await queue.put(1, 1)
    await queue.put(2, 1)
    async with anyio.create_task_group() as tg:
        tg.start_soon(queue.put, 3, 1)
        await anyio.wait_all_tasks_blocked()
        assert len(queue) == 2  # the third waits for room
        assert await queue.get() == 1
    assert len(queue) == 2


async def test_closing_drains_then_ends() -> None:
    queue: MessageQueue[int] = MessageQueue(max_bytes=10, max_items=10)
    await queue.put(1, 1)
    queue.close()
    with pytest.raises(anyio.ClosedResourceError):
        await queue.put(2, 1)
    assert await queue.get() == 1
    with pytest.raises(anyio.EndOfStream):
        await queue.get()


async def test_an_undelivered_item_goes_back_to_the_front() -> None:
    queue: MessageQueue[str] = MessageQueue(max_bytes=10, max_items=10)
    await queue.put("first", 1)
    await queue.put("second", 1)
    item, size = await queue.get_sized()
    queue.put_back(item, size)  # its consumer was cancelled before it could send it
    assert [await queue.get(), await queue.get()] == ["first", "second"]
    assert queue.bytes == 0
