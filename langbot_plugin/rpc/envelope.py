"""The wire envelope: one JSON object per frame, either a request or a response.

Request::

    {"seq_id": int, "action": str, "data": {...}, "context"?: {...}, "stream_flow_control"?: 1,
     "traceparent"?: str, "tracestate"?: str}

Response::

    {"seq_id": int, "code": 0|1, "message": str, "data": {...},
     "chunk_status": "continue"|"end", "stream_index"?: int}

``traceparent`` and ``tracestate`` carry a W3C trace context (:mod:`.tracing`); peers
that do not trace ignore them.

A frame with ``action`` is a request, one with ``code`` is a response. :func:`parse_frame`
is the only place that turns text into envelopes; it raises
:class:`~langbot_plugin.rpc.errors.MalformedMessageError` (carrying the ``seq_id`` when one
could be read) and never anything else. Both directions follow the JSON text rule of
:mod:`.wire_json` (no lone surrogates, no NaN or infinities, 64-bit integers, at most
100 levels of nesting): a frame that breaks it is refused with the path of the value
(``details.path``), and :func:`dumps` refuses to produce one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from langbot_plugin.rpc import wire_json
from langbot_plugin.rpc.errors import MalformedMessageError

__all__ = [
    "CONTINUE",
    "END",
    "ChunkStatus",
    "Request",
    "Response",
    "dumps",
    "frame_hint",
    "parse_frame",
]

_SEQ_HINT = re.compile(r'"seq_id"\s*:\s*(-?\d{1,18})(?![\d.eE])')
#: How much of a frame :func:`frame_hint` looks at.
HINT_CHARS = 256

ChunkStatus = Literal["continue", "end"]
CONTINUE: ChunkStatus = "continue"
END: ChunkStatus = "end"


def dumps(obj: Any) -> str:
    """Compact JSON text for one frame; :class:`MalformedMessageError` (with the path in
    ``details.path``) for a value the wire rule refuses, such as a non-finite float or
    a string holding a lone surrogate."""
    try:
        return wire_json.dumps(obj)
    except MalformedMessageError as exc:
        raise MalformedMessageError(
            f"frame cannot be sent: {exc.message}", details=exc.details
        ) from None


@dataclass(slots=True)
class Request:
    """A call of ``action`` with its ``data`` object."""

    seq_id: int
    action: str
    data: dict[str, Any] = field(default_factory=dict[str, Any])
    context: dict[str, Any] | None = None
    stream_flow_control: bool = False
    #: ``traceparent`` (and ``tracestate``) of the caller's span, when it traces
    trace: dict[str, str] | None = None

    def to_wire(self) -> dict[str, Any]:
        frame: dict[str, Any] = {"seq_id": self.seq_id, "action": self.action, "data": self.data}
        if self.context is not None:
            frame["context"] = self.context
        if self.stream_flow_control:
            frame["stream_flow_control"] = 1
        if self.trace is not None:
            frame.update(self.trace)
        return frame


@dataclass(slots=True)
class Response:
    """One answer (or one stream item) to the request with the same ``seq_id``."""

    seq_id: int
    code: int = 0
    message: str = "success"
    data: dict[str, Any] = field(default_factory=dict[str, Any])
    chunk_status: ChunkStatus = CONTINUE
    stream_index: int | None = None

    @property
    def ok(self) -> bool:
        return self.code == 0

    def to_wire(self) -> dict[str, Any]:
        frame: dict[str, Any] = {
            "seq_id": self.seq_id,
            "code": self.code,
            "message": self.message,
            "data": self.data,
            "chunk_status": self.chunk_status,
        }
        if self.stream_index is not None:
            frame["stream_index"] = self.stream_index
        return frame


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def frame_hint(head: str) -> tuple[int, bool]:
    """``(seq_id, is_request)`` guessed from the start of a frame that will not be parsed
    (an oversized one); ``seq_id`` is -1 when the head does not show it."""
    head = head[:HINT_CHARS]
    match = _SEQ_HINT.search(head)
    return (int(match.group(1)) if match else -1), '"action"' in head


def _trace_of(frame: dict[str, Any]) -> dict[str, str] | None:
    """The trace keys of a request frame; one that is not text is ignored (a peer's
    tracing never fails its call)."""
    parent = frame.get("traceparent")
    if not isinstance(parent, str):
        return None
    state = frame.get("tracestate")
    return (
        {"traceparent": parent, "tracestate": state}
        if isinstance(state, str)
        else {"traceparent": parent}
    )


def parse_frame(text: str | bytes) -> Request | Response:
    """Parse one frame into a :class:`Request` or a :class:`Response`."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MalformedMessageError(f"frame is not UTF-8: {exc}") from None
    try:
        obj = wire_json.loads(text)
    except MalformedMessageError as exc:  # outside the wire rule
        seq, is_request = frame_hint(text)
        details: dict[str, Any] = {**exc.details, "seq_id": seq, "request": is_request}
        raise MalformedMessageError(f"frame refused: {exc.message}", details=details) from None
    except ValueError as exc:
        raise MalformedMessageError(f"frame is not valid JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise MalformedMessageError("frame is not a JSON object")
    frame: dict[str, Any] = obj
    seq_id = frame.get("seq_id")
    if not _is_int(seq_id):
        raise MalformedMessageError("frame has no integer seq_id")
    assert isinstance(seq_id, int)
    # A malformed request is answered at its seq_id; a malformed response fails the
    # call it answers.
    reply_to = {"seq_id": seq_id, "request": "action" in frame}
    data = frame.get("data", {})
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise MalformedMessageError("frame data must be a JSON object", details=reply_to)

    if "action" in frame:
        action = frame["action"]
        if not isinstance(action, str) or not action:
            raise MalformedMessageError("action must be a non-empty string", details=reply_to)
        context = frame.get("context")
        if context is not None and not isinstance(context, dict):
            raise MalformedMessageError("context must be a JSON object", details=reply_to)
        return Request(
            seq_id=seq_id,
            action=action,
            data=data,
            context=context,
            stream_flow_control=frame.get("stream_flow_control") == 1,
            trace=_trace_of(frame),
        )

    if "code" in frame:
        code = frame["code"]
        if not _is_int(code):
            raise MalformedMessageError("code must be an integer", details=reply_to)
        status = frame.get("chunk_status", CONTINUE)
        if status not in (CONTINUE, END):
            raise MalformedMessageError("chunk_status must be continue or end", details=reply_to)
        index = frame.get("stream_index")
        if index is not None and not _is_int(index):
            raise MalformedMessageError("stream_index must be an integer", details=reply_to)
        message = frame.get("message", "")
        return Response(
            seq_id=seq_id,
            code=code,
            message=message if isinstance(message, str) else str(message),
            data=data,
            chunk_status=status,
            stream_index=index,
        )

    raise MalformedMessageError("frame has neither action nor code", details={"seq_id": seq_id})
