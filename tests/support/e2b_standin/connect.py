"""The Connect protocol as the e2b SDK speaks it to envd, server side (JSON codec).

Unary calls are ``POST /<service>/<Method>`` with ``application/json`` bodies; an
error is a non-2xx status with ``{"code": "<connect code>", "message": ...}``. Server
streams are ``application/connect+json``: the request and every response message is
an envelope (one flags byte, a 4-byte big-endian length, the JSON), and the stream
ends with an end-of-stream envelope (flags ``0x02``) carrying ``{}`` or
``{"error": {...}}``. The messages are the SDK's own generated classes.
"""

from __future__ import annotations

import json
import struct
from typing import Any, TypeVar

from aiohttp import web

__all__ = [
    "STATUS_OF",
    "ConnectFailure",
    "end_stream",
    "envelope",
    "error_response",
    "read_envelope",
]

M = TypeVar("M")

#: The HTTP status Connect prescribes for each error code (unary calls).
STATUS_OF = {
    "invalid_argument": 400,
    "unauthenticated": 401,
    "permission_denied": 403,
    "not_found": 404,
    "already_exists": 409,
    "resource_exhausted": 429,
    "failed_precondition": 400,
    "internal": 500,
    "unavailable": 503,
    "deadline_exceeded": 504,
}


class ConnectFailure(Exception):
    """An RPC error: a Connect code and a message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def envelope(payload: bytes, flags: int = 0) -> bytes:
    return struct.pack(">BI", flags, len(payload)) + payload


def end_stream(failure: ConnectFailure | None = None) -> bytes:
    body: dict[str, Any] = {}
    if failure is not None:
        body["error"] = {"code": failure.code, "message": failure.message}
    return envelope(json.dumps(body).encode(), flags=0x02)


def read_envelope(body: bytes, message_class: type[M]) -> M:
    """The one request message of a server-stream call."""
    if len(body) < 5:
        raise ConnectFailure("invalid_argument", "no request envelope")
    flags, size = struct.unpack(">BI", body[:5])
    if flags & 0x01:
        raise ConnectFailure("invalid_argument", "compressed envelopes are not served")
    payload = body[5 : 5 + size]
    return message_class.from_json(payload.decode(), ignore_unknown_fields=True)  # type: ignore[attr-defined,no-any-return]


def error_response(failure: ConnectFailure) -> web.Response:
    return web.json_response(
        {"code": failure.code, "message": failure.message},
        status=STATUS_OF.get(failure.code, 500),
    )
