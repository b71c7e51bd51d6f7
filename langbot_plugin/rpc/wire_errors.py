"""The one boundary between exceptions and wire errors.

:func:`error_response` turns any exception a handler raised into the error frame
(``message: "Class: text"`` for reference peers; ``data.error_code``, ``details`` and
``retryable`` for ours), redacted; :func:`error_from_response` turns it back into the
registered class. :func:`attach_details` adds what a handler knows beyond the class.
A relayed peer error keeps the peer's code, type and details, and its ``message`` reads
``"ActionCallError: <the peer's message>"``, as the reference's relay shows it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from langbot_plugin.rpc.envelope import Response
from langbot_plugin.rpc.errors import InternalError, RemoteError, RPCError, error_class_for_code
from langbot_plugin.rpc.redaction import redact, redact_data
from langbot_plugin.rpc.wire_json import sendable, sendable_text

__all__ = [
    "RELAYED",
    "attach_details",
    "attached_details",
    "error_from_response",
    "error_response",
]

_MAX_ERROR_CHARS = 4096
_ATTACHED = "_lbp_wire_details"
#: The class name a passed-on error is shown behind (the reference's caller-side error).
RELAYED = "ActionCallError"


def attach_details(exc: BaseException, details: Mapping[str, Any]) -> None:
    """Send ``details`` with the wire error ``exc`` becomes; an :class:`RPCError`'s own
    details win over an attached key of the same name."""
    if isinstance(exc, RPCError):
        exc.details = {**details, **exc.details}
    else:
        setattr(exc, _ATTACHED, {**attached_details(exc), **details})


def attached_details(exc: BaseException) -> dict[str, Any]:
    """What :func:`attach_details` added to an exception that is not an RPCError."""
    found = getattr(exc, _ATTACHED, None)
    return dict(found) if isinstance(found, dict) else {}  # pyright: ignore[reportUnknownArgumentType]


def error_response(seq_id: int, exc: BaseException) -> Response:
    """The wire form of ``exc``: code 1, ``"Class: text"``, and our stable code in data."""
    retryable = False
    shown: str | None = None
    if isinstance(exc, RPCError) and exc.peer_message is not None:
        # passed on from a peer: its code, type and details, its text behind ours
        code = (exc.remote_code or exc.code) if isinstance(exc, RemoteError) else exc.code
        wire_type, details, retryable = exc.peer_type or exc.wire_type, exc.details, exc.retryable
        text = exc.peer_message
        shown = RELAYED
    elif isinstance(exc, RemoteError) and exc.remote_code:
        # Relayed as it came: the peer's code, class name and text.
        wire_type, code, details = exc.remote_type or exc.wire_type, exc.remote_code, exc.details
        text = exc.message.removeprefix(f"{exc.remote_type}: ") if exc.remote_type else exc.message
        retryable = exc.retryable
    elif isinstance(exc, RPCError):
        wire_type, text, code, details = exc.wire_type, exc.message, exc.code, exc.details
        retryable = exc.retryable
    else:
        wire_type, text, code = type(exc).__name__, str(exc), InternalError.code
        details = attached_details(exc)
    if len(text) > _MAX_ERROR_CHARS:
        text = text[:_MAX_ERROR_CHARS] + "... [truncated]"
    # no secret leaves in an error (rpc.redaction), and what a peer sent us that the
    # error repeats (a lone surrogate, say) is made sendable (rpc.wire_json)
    text = sendable_text(redact(text))
    data: dict[str, Any] = {"error_code": code, "error_type": wire_type}
    if details:
        data["details"] = sendable(redact_data(details))
    if retryable:
        data["retryable"] = True
    if isinstance(exc, RPCError) and exc.peer_error is not None:
        data["error"] = sendable(redact_data(exc.peer_error))
    return Response(seq_id=seq_id, code=1, message=f"{shown or wire_type}: {text}", data=data)


def error_from_response(response: Response) -> RPCError:
    """Re-create the exception a peer reported; unknown codes become :class:`RemoteError`.
    It remembers the peer's message and type, for a relay that passes it on."""
    structured = _structured(response.data)
    error = _recreate(response, structured)
    wire_type = response.data.get("error_type")
    error.peer_message = response.message
    error.peer_type = wire_type if isinstance(wire_type, str) else None
    error.peer_error = structured
    return error


def _structured(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """A run-API error record in ``data.error`` (``code`` and ``message`` at least), as
    the released host answers a refused Box export; ``None`` when there is none."""
    found = data.get("error")
    if not isinstance(found, dict):
        return None
    record = cast(dict[str, Any], found)
    if isinstance(record.get("code"), str) and isinstance(record.get("message"), str):
        return record
    return None


def _recreate(response: Response, structured: dict[str, Any] | None) -> RPCError:
    data = response.data
    code = data.get("error_code")
    wire_type = data.get("error_type")
    details = data.get("details")
    details = details if isinstance(details, dict) else None
    retryable = data.get("retryable") is True
    text = response.message
    if isinstance(code, str):  # one of ours: the relays' prefixes are for reference peers
        while text.startswith(f"{RELAYED}: "):
            text = text[len(RELAYED) + 2 :]
    if structured is not None:  # the record says it better than the frame's text
        text = structured["message"]
        if not isinstance(code, str):
            code = structured["code"]
            found = structured.get("details")
            details = cast(dict[str, Any], found) if isinstance(found, dict) else None
            retryable = structured.get("retryable") is True
    cls = error_class_for_code(code) if isinstance(code, str) else None
    if cls is None or cls is RemoteError:
        return RemoteError(
            text,
            remote_code=code if isinstance(code, str) else "",
            remote_type=wire_type if isinstance(wire_type, str) else "",
            details=details,
            retryable=retryable,
        )
    # Strip the "Class: " prefix when it names this class or a class it refines (a
    # subclass may show its parent's name to reference peers); keep "ValueError: boom"
    # for an InternalError.
    names = {base.__name__ for base in cls.__mro__ if issubclass(base, RPCError)}
    if isinstance(wire_type, str) and wire_type in names and text.startswith(f"{wire_type}: "):
        text = text[len(wire_type) + 2 :]
    assert isinstance(code, str)
    try:
        return cls.from_wire(text, code=code, details=details, retryable=retryable)
    except TypeError:  # a subclass whose constructor differs and that did not say how
        return RemoteError(text, remote_code=code, details=details)
