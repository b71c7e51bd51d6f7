"""An MCP client transport over a WebSocket, for the relay tests and benchmarks.

The ``mcp`` package (2.x) ships no WebSocket client transport, so this one bridges a
``websockets`` connection to the stream pair :class:`mcp.ClientSession` runs on, one
JSON-RPC message per text frame (as the released host's relay client does). Every
frame received is also recorded in :attr:`FrameLog` so tests can check the framing
itself: a frame that is not exactly one message reaches the session as an error item
and is counted in :attr:`FrameLog.errors`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from websockets.asyncio.client import connect
from websockets.typing import Subprotocol

__all__ = ["FrameLog", "relay_transport"]

#: Large enough for the biggest message the relay carries (16 MiB) plus JSON overhead.
MAX_FRAME_BYTES = 40 * 1024 * 1024


@dataclass
class FrameLog:
    received: int = 0
    sent: int = 0
    largest: int = 0
    errors: list[str] = field(default_factory=list[str])


@asynccontextmanager
async def relay_transport(
    url: str, headers: Mapping[str, str] | None = None, log: FrameLog | None = None
) -> AsyncGenerator[
    tuple[
        anyio.abc.ObjectReceiveStream[SessionMessage | Exception],
        anyio.abc.ObjectSendStream[SessionMessage],
    ]
]:
    frames = log if log is not None else FrameLog()
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    async with connect(
        url,
        subprotocols=[Subprotocol("mcp")],
        additional_headers=dict(headers or {}),
        max_size=MAX_FRAME_BYTES,
        proxy=None,
    ) as ws:

        async def reader() -> None:
            async with read_writer:
                async for text in ws:
                    frames.received += 1
                    frames.largest = max(frames.largest, len(text))
                    try:
                        message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
                    except ValueError as exc:
                        frames.errors.append(f"{exc}"[:300])
                        await read_writer.send(exc)
                        continue
                    await read_writer.send(SessionMessage(message))

        async def writer() -> None:
            async with write_reader:
                async for item in write_reader:
                    await ws.send(item.message.model_dump_json(by_alias=True, exclude_unset=True))
                    frames.sent += 1

        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            tg.start_soon(writer)
            try:
                yield read_stream, write_stream
            finally:
                tg.cancel_scope.cancel()
