"""Plain JSON-RPC clients, served by the ``mcp`` package's HTTP transport.

The reference's MCP endpoints were written by hand and answered any JSON-RPC POST.
The official streamable-HTTP transport refuses a POST whose ``Accept`` does not name
both ``application/json`` and ``text/event-stream`` (406) or whose ``Content-Type``
is not JSON (415), and its server refuses an ``initialize`` without ``capabilities``
and ``clientInfo``. Harnesses and scripts written against the reference send exactly
that, so:

* :class:`PlainJSONRPC` wraps the transport's ASGI app: a POST names both media types
  and JSON as its content type (the transport answers JSON either way: it runs in
  JSON-response mode), and a sparse ``initialize`` is completed;
* :func:`complete_initialize` completes one message, for the in-process path.

Everything else (parsing, validation, the answers) stays the package's.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["ACCEPT", "PlainJSONRPC", "complete_initialize", "read_body", "replaying"]

#: What the transport wants a client to accept.
ACCEPT = b"application/json, text/event-stream"
#: The protocol version a client that names none gets (the reference's assumption).
_DEFAULT_VERSION = "2025-06-18"
_UNNAMED_CLIENT = {"name": "json-rpc-client", "version": "0"}


def complete_initialize(message: Any) -> Any:
    """``message`` with the fields an ``initialize`` request may leave out filled in
    (a copy; anything else is returned as it is)."""
    if not isinstance(message, dict):
        return message
    request = cast(dict[str, Any], message)
    if request.get("method") != "initialize":
        return message
    raw = request.get("params")
    params = dict(cast(dict[str, Any], raw)) if isinstance(raw, dict) else {}
    params.setdefault("protocolVersion", _DEFAULT_VERSION)
    params.setdefault("capabilities", {})
    params.setdefault("clientInfo", dict(_UNNAMED_CLIENT))
    return {**request, "params": params}


async def read_body(receive: Receive, limit: float = math.inf) -> bytes | None:
    """A request's body (``None``: the client went away); reading stops once the body
    is over ``limit`` bytes."""
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        body += message.get("body", b"")
        if len(body) > limit or not message.get("more_body", False):
            return bytes(body)


def replaying(body: bytes, receive: Receive) -> Receive:
    """``receive`` for an app after :func:`read_body`: ``body`` first, then the rest."""
    replayed = False

    async def replay() -> Any:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class PlainJSONRPC:
    """ASGI wrapper around the transport (see the module docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self._app(scope, receive, send)
            return
        headers = [(k, v) for k, v in scope["headers"] if k not in (b"accept", b"content-type")]
        headers += [(b"accept", ACCEPT), (b"content-type", b"application/json")]
        content = await read_body(receive)
        if content is None:
            return
        try:
            content = json.dumps(complete_initialize(json.loads(content))).encode()
        except ValueError:
            pass  # not JSON: the transport answers the parse error
        headers = [(k, v) for k, v in headers if k != b"content-length"]
        headers.append((b"content-length", str(len(content)).encode()))
        await self._app({**scope, "headers": headers}, replaying(content, receive), send)
