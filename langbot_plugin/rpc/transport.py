"""What a transport is: a pair of message streams.

A transport moves whole frames (JSON text) and knows nothing about actions. Each
transport module offers an async context manager that yields a :class:`Transport`:

* ``receive`` yields one item per incoming frame: the frame's text, or an
  :class:`~langbot_plugin.rpc.errors.RPCError` describing a frame that could not be
  read (for example an oversized line). It raises :class:`anyio.EndOfStream` when the
  peer is gone.
* ``send`` takes the text of one frame.

Transports: :mod:`.transport_memory` (in-process pair), :mod:`.transport_stdio` (NDJSON on
pipes, with the reference's chunk framing for big frames), :mod:`.transport_ws`
(``websockets`` client and server) and :mod:`.transport_aiohttp` (an aiohttp WebSocket).
"""

from __future__ import annotations

from dataclasses import dataclass

from anyio.abc import ObjectReceiveStream, ObjectSendStream

from langbot_plugin.rpc.envelope import frame_hint
from langbot_plugin.rpc.errors import MalformedMessageError, RPCError

__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "ReceivedItem", "Transport", "decode_binary"]

#: Largest frame, in UTF-8 bytes. Transports refuse a larger one before buffering it
#: (stdio skips it and keeps the connection; a WebSocket closes with code 1009) and
#: report it as a ``message_too_large`` item; a session refuses to send one.
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024

ReceivedItem = str | RPCError


def decode_binary(payload: bytes) -> ReceivedItem:
    """A binary WebSocket frame as frame text: strict UTF-8, never replaced (the rule
    of :mod:`.wire_json`); bytes that are not UTF-8 are a ``malformed_message`` item,
    answered at the ``seq_id`` its head shows."""
    try:
        return payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        seq, is_request = frame_hint(payload[:256].decode("utf-8", "replace"))
        return MalformedMessageError(
            f"binary frame is not UTF-8 text: {exc}", details={"seq_id": seq, "request": is_request}
        )


@dataclass(frozen=True, slots=True)
class Transport:
    """The two halves of a bidirectional frame channel."""

    receive: ObjectReceiveStream[ReceivedItem]
    send: ObjectSendStream[str]
