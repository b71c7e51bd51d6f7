"""An in-process transport pair, for tests and for embedding a runtime in a host."""

from __future__ import annotations

import anyio

from langbot_plugin.rpc.transport import ReceivedItem, Transport

__all__ = ["memory_pair"]


def memory_pair(buffer_size: int = 256) -> tuple[Transport, Transport]:
    """Two connected transports; what one sends, the other receives (bounded buffers)."""
    a_to_b_send, a_to_b_receive = anyio.create_memory_object_stream[ReceivedItem](buffer_size)
    b_to_a_send, b_to_a_receive = anyio.create_memory_object_stream[ReceivedItem](buffer_size)
    return (
        Transport(receive=b_to_a_receive, send=a_to_b_send),  # type: ignore[arg-type]
        Transport(receive=a_to_b_receive, send=b_to_a_send),  # type: ignore[arg-type]
    )
