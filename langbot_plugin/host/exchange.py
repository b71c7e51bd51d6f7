"""A plugin's whole exchange with its host, recorded, and replayed deterministically.

A :class:`Recording` is its entries in order, saved as JSON lines after a header:
``{"input": ...}`` (what the user asked), ``{"call": {"action", "data"}, "answer": ...}``
(a call to the host and its answer, ``items`` or ``error``) and ``{"output": ...}``
(what came back to the user). :class:`Recorder` passes every call on and writes it
down; :class:`Replayer` answers from a recording and stops at the first call that
differs (:class:`Divergence`, :attr:`Replayer.difference`). Ids that change from run to
run are stored as placeholders (``run-1``...); the registration handshake is neither
recorded nor replayed (docs/plugin-testing.md).
"""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from langbot_plugin.protocol.host_link import GET_PLUGIN_SETTINGS, INITIALIZE_PLUGIN_SETTINGS
from langbot_plugin.protocol.table import ActionTable
from langbot_plugin.rpc import Dispatcher, RemoteError, RequestContext, Route, RPCError
from langbot_plugin.rpc.errors import error_class_for_code
from langbot_plugin.rpc.routes import Answer, CallNext, when_done

__all__ = [
    "FORMAT",
    "Difference",
    "Divergence",
    "Recorder",
    "Recording",
    "RecordingError",
    "Replayer",
    "first_difference",
    "shown",
]

#: The first line of a recording file.
FORMAT = "langbot-plugin exchange recording"
VERSION = 1
#: Calls of the registration handshake: served live, never part of a recording.
UNRECORDED = frozenset({INITIALIZE_PLUGIN_SETTINGS.name, GET_PLUGIN_SETTINGS.name})
#: Keys whose values differ from run to run: compared as placeholders.
VOLATILE = {"run_id": "run", "conversation_id": "conversation"}


class RecordingError(ValueError):
    """A recording file cannot be read (the message says where and why)."""


class Divergence(RPCError):
    """The plugin made a call the recording does not have at this point."""

    code = "replay_divergence"


def shown(value: Any, limit: int = 300) -> str:
    """``value`` as compact JSON, cut to ``limit`` characters."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class Placeholders:
    """Maps each volatile id to a stable name (``run-1``, ``run-2``...) in order seen."""

    seen: dict[tuple[str, str], str] = field(default_factory=dict[tuple[str, str], str])

    def __call__(self, value: Any) -> Any:
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key, item in cast(dict[str, Any], value).items():
                kind = VOLATILE.get(key)
                if kind is not None and isinstance(item, str) and item:
                    out[key] = self.seen.setdefault(
                        (kind, item), f"{kind}-{sum(k == kind for k, _ in self.seen) + 1}"
                    )
                else:
                    out[key] = self(item)
            return out
        if isinstance(value, list):
            return [self(item) for item in cast(list[Any], value)]
        return value


@dataclass
class Recording:
    """The entries of one exchange, in order (see the module docstring)."""

    entries: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    plugin: str = ""
    #: The runner the inputs went to (``""``: the plugin's first, or a recording made
    #: before runners were recorded).
    runner: str = ""

    @property
    def inputs(self) -> list[str]:
        return [str(e["input"]) for e in self.entries if "input" in e]

    @property
    def calls(self) -> list[dict[str, Any]]:
        return [e for e in self.entries if "call" in e]

    @property
    def outputs(self) -> list[dict[str, Any]]:
        return [e["output"] for e in self.entries if "output" in e]

    def dumps(self) -> str:
        header = {"format": FORMAT, "version": VERSION, "plugin": self.plugin}
        if self.runner:
            header["runner"] = self.runner
        lines = [json.dumps(header, ensure_ascii=False)]
        lines += [json.dumps(e, ensure_ascii=False, default=str) for e in self.entries]
        return "\n".join(lines) + "\n"

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.dumps(), encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> Recording:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise RecordingError(f"cannot read {path}: {exc.strerror or exc}") from None
        try:
            parsed = [json.loads(line) for line in lines if line.strip()]
        except ValueError as exc:
            raise RecordingError(f"{path} is not a recording (not JSON lines: {exc})") from None
        header = parsed[0] if parsed else None
        if not isinstance(header, dict) or header.get("format") != FORMAT:  # pyright: ignore[reportUnknownMemberType]
            raise RecordingError(f"{path} is not a recording made by lbp dev --record")
        entries = [cast(dict[str, Any], e) for e in parsed[1:] if isinstance(e, dict)]
        fields = cast(dict[str, Any], header)
        return cls(entries, str(fields.get("plugin") or ""), str(fields.get("runner") or ""))


def _error_entry(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, RPCError):
        return {"code": exc.code, "message": exc.message, "details": exc.details}
    return {"code": "internal_error", "message": f"{type(exc).__name__}: {exc}", "details": {}}


def _raise_recorded(error: dict[str, Any]) -> RPCError:
    code, message = str(error.get("code") or "rpc_error"), str(error.get("message") or "")
    details = error.get("details") if isinstance(error.get("details"), dict) else None
    cls = error_class_for_code(code)
    if cls is None or cls is RemoteError:
        return RemoteError(message, remote_code=code, details=details)
    try:
        return cls.from_wire(message, code=code, details=details, retryable=False)
    except TypeError:
        return RemoteError(message, remote_code=code, details=details)


class Recorder(ActionTable):
    """A host dispatcher that serves through ``inner`` and writes every call down."""

    def __init__(self, inner: Dispatcher, recording: Recording | None = None) -> None:
        super().__init__()
        self.inner = inner
        self.recording = recording or Recording()
        self.placeholders = Placeholders()
        self.mount(inner, self._record, when=lambda action: action not in UNRECORDED)

    def input(self, line: str) -> None:
        self.recording.entries.append({"input": line})

    def output(self, kind: str, data: dict[str, Any]) -> None:
        self.recording.entries.append({"output": {"kind": kind, **self.placeholders(data)}})

    async def _record(self, ctx: RequestContext, call_next: CallNext) -> Answer:
        entry: dict[str, Any] = {
            "call": {"action": ctx.request.action, "data": self.placeholders(ctx.data)}
        }
        self.recording.entries.append(entry)
        try:
            answer = await call_next(ctx)
        except Exception as exc:
            entry["error"] = _error_entry(exc)
            raise
        if isinstance(answer, dict):
            entry["answer"] = copy.deepcopy(answer)
            return answer
        items: list[Any] = []
        entry["items"] = items

        def done(error: Exception | None) -> None:
            if error is not None:
                entry["error"] = _error_entry(error)

        return when_done(answer, done, lambda item: items.append(copy.deepcopy(item)))


@dataclass(frozen=True, slots=True)
class Difference:
    """The first call that is not the recorded one: its number (1-based), what the
    recording has there (``None`` past its end) and what the plugin did (``None``: it
    made no more calls)."""

    number: int
    expected: dict[str, Any] | None
    got: dict[str, Any] | None

    def describe(self) -> str:
        if self.got is None:
            assert self.expected is not None
            want = f"{self.expected['action']} {shown(self.expected['data'])}"
            return f"call {self.number} was not made: the recording has {want}"
        got = f"{self.got['action']} {shown(self.got['data'])}"
        if self.expected is None:
            return f"call {self.number} is not in the recording (it has {self.number - 1}): {got}"
        want = f"{self.expected['action']} {shown(self.expected['data'])}"
        if self.expected["action"] != self.got["action"]:
            return f"call {self.number} differs: the recording has {want}; this run made {got}"
        where, wanted, made = first_difference(self.expected["data"], self.got["data"])
        return (
            f"call {self.number} ({self.got['action']}) differs at {where or 'its data'}: "
            f"the recording has {shown(wanted)}; this run made {shown(made)}"
        )


_ABSENT = "(absent)"


def first_difference(a: Any, b: Any, path: str = "") -> tuple[str, Any, Any]:
    """Where two JSON values first differ (``data.messages[0].content``), and what each
    has there."""
    if isinstance(a, dict) and isinstance(b, dict):
        left, right = cast(dict[str, Any], a), cast(dict[str, Any], b)
        for key in sorted(set(left) | set(right)):
            if left.get(key, _ABSENT) != right.get(key, _ABSENT):
                return first_difference(
                    left.get(key, _ABSENT), right.get(key, _ABSENT), f"{path}.{key}".lstrip(".")
                )
    if isinstance(a, list) and isinstance(b, list):
        left_items, right_items = cast(list[Any], a), cast(list[Any], b)
        for index in range(max(len(left_items), len(right_items))):
            want = left_items[index] if index < len(left_items) else _ABSENT
            have = right_items[index] if index < len(right_items) else _ABSENT
            if want != have:
                return first_difference(want, have, f"{path}[{index}]")
    return path, a, b


class Replayer:
    """A host dispatcher that answers each call from ``recording``, in order; calls it
    does not record (the handshake) go to ``fallback``."""

    def __init__(self, recording: Recording, fallback: Dispatcher) -> None:
        self.recording = recording
        self.fallback = fallback
        self.placeholders = Placeholders()
        self.calls = recording.calls
        self.made = 0
        self.difference: Difference | None = None
        self.on_difference: Callable[[Difference], None] | None = None
        self._unary_route = Route(self._replayed)
        self._stream_route = Route(self._replayed_stream, stream=True)

    def _take(self, ctx: RequestContext) -> dict[str, Any]:
        got = {"action": ctx.request.action, "data": self.placeholders(ctx.data)}
        self.made += 1
        expected = self.calls[self.made - 1]["call"] if self.made <= len(self.calls) else None
        if self.difference is None and expected != got:
            self.difference = Difference(self.made, expected, got)
            if self.on_difference is not None:
                self.on_difference(self.difference)
        if self.difference is not None:
            raise Divergence(f"replay stopped: {self.difference.describe()}")
        return self.calls[self.made - 1]

    async def _replayed(self, ctx: RequestContext) -> dict[str, Any]:
        entry = self._take(ctx)
        if "error" in entry:
            raise _raise_recorded(entry["error"])
        return cast(dict[str, Any], entry.get("answer") or {})

    async def _replayed_stream(self, ctx: RequestContext) -> AsyncIterator[dict[str, Any]]:
        entry = self._take(ctx)
        for item in entry.get("items") or []:
            yield item
        if "error" in entry:
            raise _raise_recorded(entry["error"])

    def resolve(self, action: str) -> Route | None:
        """The recording's answer, in the shape ``fallback`` serves ``action`` (a unary
        answer for what it does not know); the two routes are built once."""
        known = self.fallback.resolve(action)
        if action in UNRECORDED:
            return known
        return self._stream_route if known is not None and known.stream else self._unary_route
