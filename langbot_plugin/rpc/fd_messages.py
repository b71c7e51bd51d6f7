"""JSON messages with file descriptors attached, over a ``SOCK_SEQPACKET`` Unix socket
(one message per packet, descriptors as ``SCM_RIGHTS``): the runtime and its worker
template (:mod:`langbot_plugin.runtime.template`) talk this way."""

from __future__ import annotations

import array
import json
import os
import socket
from collections.abc import Sequence
from typing import Any

__all__ = ["MAX_FDS", "MAX_MESSAGE", "pack", "receive_size", "send_message", "unpack"]

#: The largest message (an environment fits many times over).
MAX_MESSAGE = 1 << 20
#: The most descriptors one message carries.
MAX_FDS = 4


def pack(fds: Sequence[int]) -> list[tuple[int, int, bytes]]:
    """The ancillary data that passes ``fds``."""
    if not fds:
        return []
    return [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds).tobytes())]


def send_message(sock: socket.socket, message: dict[str, Any], fds: Sequence[int] = ()) -> None:
    sock.sendmsg([json.dumps(message).encode()], pack(fds))


def unpack(
    data: bytes, ancillary: list[tuple[int, int, bytes]]
) -> tuple[dict[str, Any] | None, list[int]]:
    """The message (``None``: the peer closed the socket) and the descriptors received
    with it (now ours to close)."""
    fds = array.array("i")
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    if not data:
        for fd in fds:
            os.close(fd)
        return None, []
    message = json.loads(data)
    if not isinstance(message, dict):
        for fd in fds:
            os.close(fd)
        raise ValueError("a message is a JSON object")
    return dict[str, Any](message), list(fds)


def receive_size() -> tuple[int, int]:
    """``recvmsg`` sizes: the data and the ancillary buffer."""
    return MAX_MESSAGE, socket.CMSG_SPACE(MAX_FDS * array.array("i").itemsize)
