"""What a host does with the items a runner streams: :class:`ResultNormalizer`.

One normalizer per run. Feed it each item of the ``run_runner`` stream; it returns a
:class:`NormalizedResult` to act on, or ``None`` when the item is dropped (the reason
kept in :attr:`ResultNormalizer.dropped`). The rules (docs/agent-runner.md): duplicate
sequences are dropped and missing ones assigned ``last + 1``; an item without ``type``
fails the run (``runner.protocol_error``); known payloads are validated strictly
(invalid ones dropped, as the 4.11.2 host does), unknown types kept; ``message.delta``
is cumulative; a final message is delivered once; oversized messages are truncated
visibly (:mod:`langbot_plugin.host.truncation`); a blank message is dropped and a run
with no message ends ``empty_result``; items after the terminal one are dropped, and
:meth:`ResultNormalizer.close` ends a run that stopped without one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from dataclasses import replace as _replace
from typing import Any

from pydantic import BaseModel, ValidationError

from langbot_plugin.api.entities.builtin.agent_runner.payloads import (
    ActionRequestedPayload,
    MessageCompletedPayload,
    MessageDeltaPayload,
    ProcessorLogPayload,
    RunCompletedPayload,
    RunFailedPayload,
    StateUpdatedPayload,
    ToolCallCompletedPayload,
    ToolCallStartedPayload,
)
from langbot_plugin.api.entities.builtin.agent_runner.streaming import chunk_text
from langbot_plugin.api.entities.builtin.provider.message import Message, MessageChunk
from langbot_plugin.host.truncation import DEFAULT_MESSAGE_LIMIT, Truncation, truncate_message
from langbot_plugin.protocol.runners import EMPTY, HOLD, OutputWatch, empty_result

__all__ = [
    "MAX_RESULT_BYTES",
    "STRICT_PAYLOADS",
    "Dropped",
    "NormalizedResult",
    "ResultNormalizer",
    "message_text",
]

#: JSON size of one result (other than a message) beyond which it is dropped.
MAX_RESULT_BYTES = 1024 * 1024


#: The result types this host validates and acts on, with their payload models.
STRICT_PAYLOADS: dict[str, type[BaseModel]] = {
    "message.delta": MessageDeltaPayload,
    "message.completed": MessageCompletedPayload,
    "tool.call.started": ToolCallStartedPayload,
    "tool.call.completed": ToolCallCompletedPayload,
    "state.updated": StateUpdatedPayload,
    "action.requested": ActionRequestedPayload,
    "run.completed": RunCompletedPayload,
    "run.failed": RunFailedPayload,
    "processor.log": ProcessorLogPayload,
}


def message_text(message: Message | MessageChunk | None) -> str:
    """The plain text of a message or chunk (text parts joined)."""
    if message is None:
        return ""
    return chunk_text(MessageChunk(role=message.role, content=message.content))


@dataclass(frozen=True, slots=True)
class Dropped:
    """An item the normalizer did not accept, and why."""

    reason: str
    type: str | None = None
    sequence: int | None = None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class NormalizedResult:
    """One accepted result.

    ``data`` is the payload as recorded (truncated where needed). ``message`` is set
    when there is a message to deliver, ``chunk``/``text`` for a delta (``text`` is
    the cumulative answer), ``payload`` holds the validated model of a known type.
    """

    sequence: int
    type: str
    data: dict[str, Any]
    usage: dict[str, Any] | None = None
    timestamp: int | None = None
    known: bool = True
    payload: BaseModel | None = None
    chunk: MessageChunk | None = None
    text: str | None = None
    message: Message | None = None
    duplicate: bool = False
    terminal: bool = False
    truncated: Truncation | None = None

    def to_wire(self, run_id: str) -> dict[str, Any]:
        """The result in the ``run_runner`` item shape, with the assigned sequence."""
        return {
            "run_id": run_id,
            "type": self.type,
            "data": self.data,
            "usage": self.usage,
            "sequence": self.sequence,
            "timestamp": self.timestamp,
        }


def _positive_int(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def _dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", exclude_none=True)


@dataclass
class ResultNormalizer:
    """Normalizes one run's result stream (see the module docstring)."""

    run_id: str
    max_message_bytes: int = DEFAULT_MESSAGE_LIMIT
    max_result_bytes: int = MAX_RESULT_BYTES
    status: str = "running"
    error: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    last_sequence: int = 0
    last_text: str | None = None
    last_message: Message | None = None
    dropped: list[Dropped] = field(default_factory=list[Dropped])
    _seen: set[int] = field(default_factory=set[int])
    _delivered: dict[str, Any] | None = None
    _output: OutputWatch = field(default_factory=OutputWatch)

    @property
    def terminal(self) -> bool:
        return self.status != "running"

    @property
    def final_text(self) -> str:
        """The answer as the user saw it last: the last delivered message, or the
        last delta's cumulative text if no message followed it."""
        if self.last_text is not None:
            return self.last_text
        return message_text(self.last_message)

    def _drop(self, reason: str, kind: str | None, seq: int | None, detail: str = "") -> None:
        self.dropped.append(Dropped(reason, kind, seq, detail[:500]))

    def _sequence(self, raw: Any) -> int | None:
        seq = _positive_int(raw)
        if seq is None:
            seq = self.last_sequence + 1
        elif seq in self._seen:
            return None
        self._seen.add(seq)
        self.last_sequence = max(self.last_sequence, seq)
        return seq

    def accept(self, item: Any) -> NormalizedResult | None:
        """Normalize one streamed item; ``None`` if it was dropped."""
        raw: dict[str, Any] = item if isinstance(item, dict) else {}
        kind = raw.get("type")
        if self.terminal:
            self._drop("after_terminal", kind if isinstance(kind, str) else None, None)
            return None
        if not isinstance(kind, str) or not kind:
            return self.close("failed", "result item without a type", "runner.protocol_error")
        seq = self._sequence(raw.get("sequence"))
        if seq is None:
            self._drop("duplicate_sequence", kind, _positive_int(raw.get("sequence")))
            return None
        data = raw.get("data")
        data = data if isinstance(data, dict) else {}
        usage = raw.get("usage") if isinstance(raw.get("usage"), dict) else None
        stamp = raw.get("timestamp")
        timestamp = stamp if isinstance(stamp, int) and not isinstance(stamp, bool) else None
        base = NormalizedResult(seq, kind, data, usage, timestamp)
        model = STRICT_PAYLOADS.get(kind)
        if model is None:
            if self._oversized(data, kind, seq):
                return None
            return _replace(base, known=False)
        try:
            payload = model.model_validate(data)
        except ValidationError as exc:
            self._drop("invalid_payload", kind, seq, str(exc))
            return None
        verdict = self._output.admit(kind, data)
        if verdict == EMPTY:  # no blank success: a controlled failure
            failed = empty_result(self.run_id, seq)["data"]
            base = _replace(base, type="run.failed", data=failed)
            payload = RunFailedPayload.model_validate(failed)
        elif verdict == HOLD:  # no blank message reaches the transcript or the user
            self._drop("blank_message", kind, seq)
            return None
        accepted = self._known(base, payload)
        details = raw.get("details")
        if isinstance(payload, RunFailedPayload) and self.error is not None and details:
            # Ours, beside data: where the plugin's code raised (worker.author_trace).
            self.error["details"] = details if isinstance(details, dict) else {}
        return accepted

    def _oversized(self, data: dict[str, Any], kind: str, seq: int) -> bool:
        size = len(json.dumps(data, ensure_ascii=False, default=str).encode("utf-8"))
        if size > self.max_result_bytes:
            self._drop("too_large", kind, seq, f"{size} bytes")
            return True
        return False

    def _known(self, base: NormalizedResult, payload: BaseModel) -> NormalizedResult | None:
        if isinstance(payload, MessageDeltaPayload):
            chunk, cut = truncate_message(payload.chunk, self.max_message_bytes)
            # an empty delta (the usual is_final marker) keeps the text so far, as the
            # released host's stream coalescing does
            text = (
                chunk.all_content
                if chunk.all_content is not None
                else (chunk_text(chunk) or self.last_text or "")
            )
            self.last_text = text
            data = {**base.data, "chunk": _dump(chunk)} if cut else base.data
            return _replace(base, data=data, payload=payload, chunk=chunk, text=text, truncated=cut)
        if isinstance(payload, MessageCompletedPayload):
            return self._message(base, payload, payload.message, terminal=False)
        if isinstance(payload, RunCompletedPayload):
            self.status = "completed"
            self.usage = base.usage or self.usage
            if payload.message is None:
                return _replace(base, payload=payload, terminal=True)
            return self._message(base, payload, payload.message, terminal=True)
        if isinstance(payload, RunFailedPayload):
            self.status = "cancelled" if payload.code == "cancelled" else "failed"
            self.usage = base.usage or self.usage
            self.error = _dump(payload)
            return _replace(base, payload=payload, terminal=True)
        if self._oversized(base.data, base.type, base.sequence):
            return None
        return _replace(base, payload=payload)

    def _message(
        self, base: NormalizedResult, payload: BaseModel, message: Message, *, terminal: bool
    ) -> NormalizedResult:
        fingerprint = _dump(message)
        if terminal and fingerprint == self._delivered:
            return _replace(base, payload=payload, duplicate=True, terminal=True)
        shown, cut = truncate_message(message, self.max_message_bytes)
        self._delivered = fingerprint
        self.last_message = shown
        self.last_text = None
        data = {**base.data, "message": _dump(shown)} if cut else base.data
        return _replace(
            base,
            data=data,
            payload=payload,
            message=shown,
            text=message_text(shown),
            terminal=terminal,
            truncated=cut,
        )

    def close(
        self, status: str, error: str, code: str, *, retryable: bool = False
    ) -> NormalizedResult | None:
        """End a run that stopped without a terminal result; ``None`` if it had one.

        The synthesized ``run.failed`` (sequence ``last + 1``) carries ``error`` and
        ``code`` (for example ``cancelled``, ``runner.timeout``, ``runner.no_result``).
        """
        if self.terminal:
            return None
        payload = RunFailedPayload(error=error, code=code, retryable=retryable)
        self.status = status
        self.error = _dump(payload)
        self.last_sequence += 1
        self._seen.add(self.last_sequence)
        return NormalizedResult(
            self.last_sequence, "run.failed", _dump(payload), payload=payload, terminal=True
        )
