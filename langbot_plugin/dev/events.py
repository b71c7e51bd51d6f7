"""What a ``lbp dev`` session reports: :class:`DevEvent`, and :class:`EventHub` to fan them out.

Every front end (the terminal, ``--json``, the web page, a test) subscribes to one
hub and sees the same events in the same order. The kinds:

=====================  ==========================================================
kind                   data
=====================  ==========================================================
``user.input``         ``line``: what the user typed (a message, ``!command``,
                       ``/tool``, ``/event``, ``/reset``), before it is handled
``run.started``        ``text``, ``runner``, ``conversation_id``
a run result type      the result as the host normalized it: ``type``,
(``message.delta``,    ``sequence``, ``data``, ``usage``, ``text`` (for a delta the
``tool.call.started``, cumulative answer so far)
``state.updated``,
``run.completed``...)
``run.ended``          ``status``, ``text``, ``usage``, ``error``
``tool.call``          a host tool the plugin called: ``name``, ``arguments``
``tool.result``        ``name``, ``result`` or ``error``
``host.call``          any other call the plugin made to the host: ``action``
``command.reply``      ``command``, ``text`` (one per reply of a command)
``tool.reply``         ``name``, ``result`` (a ``/tool`` call from the session)
``event.reply``        ``name``, ``result`` (an ``/event`` emitted by the session),
                       ``replies`` (the texts its listeners replied), ``failed``
                       (the plugins whose listener raised)
``call.failed``        a tool, command or listener raised: ``kind``, ``name``,
                       ``code``, ``error``, and where the plugin raised when
                       known: ``where`` (``file:line``), ``traceback`` (its frames)
``page.call``          a ``langbot.api`` call of a previewed page: ``page``,
                       ``method``, ``endpoint``, ``answer``
``plugin.ready``       ``identity``, ``runners``, ``tools``, ``commands``, ``pages``
``plugin.reloaded``    the same, after a save that loads
``plugin.broken``      ``text``: the readable block of what is wrong
``plugin.exited``      ``code``: the plugin's process ended while the session ran
``conversation.reset`` ``conversation_id``
``log``                ``source`` (``plugin`` or ``runtime``), ``level``,
                       ``logger``, ``text``
=====================  ==========================================================
"""

from __future__ import annotations

import inspect
import json
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["DevEvent", "EventHub", "Listener", "LogRecordParser", "failed", "where"]


@dataclass(frozen=True, slots=True)
class DevEvent:
    """One thing that happened in a session."""

    kind: str
    data: dict[str, Any]
    run_id: str | None = None
    time: float = field(default_factory=time.time)

    def to_json(self) -> str:
        """The event as one line of JSON (``--json``, the page's WebSocket)."""
        event = {"kind": self.kind, "run_id": self.run_id, "time": self.time, "data": self.data}
        return json.dumps(event, ensure_ascii=False, default=str)


Listener = Callable[[DevEvent], Awaitable[None] | None]


class _Failure(Protocol):
    @property
    def code(self) -> str: ...
    @property
    def details(self) -> dict[str, Any]: ...


def where(details: dict[str, Any] | None) -> str | None:
    """``file:line`` of the plugin's code that raised, from an error's details."""
    details = details or {}
    file, line = details.get("file"), details.get("line")
    return f"{file}:{line}" if file and line else None


def failed(kind: str, name: str, error: _Failure) -> dict[str, Any]:
    """The data of a ``call.failed`` event for an RPC error or a listener's failure."""
    message = getattr(error, "message", None) or getattr(error, "error", "")
    data: dict[str, Any] = {"kind": kind, "name": name, "code": error.code, "error": message}
    if where(error.details):
        data["where"] = where(error.details)
        data["traceback"] = str(error.details.get("traceback") or "")
    return data


class EventHub:
    """Delivers each event to every listener in turn (a slow listener slows the
    session down rather than losing events) and keeps the last ``history`` events."""

    def __init__(self, history: int = 1000) -> None:
        self._listeners: list[Listener] = []
        self.recent: deque[DevEvent] = deque(maxlen=history)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add ``listener``; call the returned function to remove it."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    async def emit(self, kind: str, data: dict[str, Any], run_id: str | None = None) -> DevEvent:
        event = DevEvent(kind, data, run_id)
        self.recent.append(event)
        for listener in list(self._listeners):
            maybe = listener(event)
            if inspect.isawaitable(maybe):
                await maybe
        return event


#: A line that starts a record in the CLI's log format (``LOG_FORMAT`` of ``cli.daemon``).
_HEADER = re.compile(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} (?P<level>[A-Z]+)\s+(?P<logger>[\w.-]+): (?P<text>.*)$"
)


@dataclass
class LogRecordParser:
    """Groups lines of a child's log output into records.

    A line in the log format starts a record; the lines after it that are not (a
    reload error's block, a traceback) belong to it. Any other line (a ``print``, a
    one-line CLI error) is a record of its own with level ``OUTPUT``.
    """

    pending: dict[str, Any] | None = None

    def feed(self, line: str) -> list[dict[str, Any]]:
        """The records completed by ``line``."""
        done: list[dict[str, Any]] = []
        match = _HEADER.match(line)
        if match is not None:
            done.extend(self.flush())
            self.pending = {
                "level": match["level"],
                "logger": match["logger"],
                "text": match["text"],
            }
        elif self.pending is not None and (
            line.startswith((" ", "\t", "Traceback"))
            or not line.strip()
            or self.pending["level"] in ("ERROR", "CRITICAL")
        ):
            self.pending["text"] += "\n" + line
        else:
            done.extend(self.flush())
            if line.strip():
                done.append({"level": "OUTPUT", "logger": "", "text": line})
        return done

    def flush(self) -> list[dict[str, Any]]:
        """The record being collected, if any (the child went quiet or ended)."""
        if self.pending is None:
            return []
        record, self.pending = self.pending, None
        record["text"] = record["text"].rstrip()
        return [record]
