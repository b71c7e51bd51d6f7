"""What a log line knows about the work it was written for, and the JSON line format.

The session marks its task with the request it serves (:func:`serving`, one
``ContextVar.set``); code that learns more adds fields with :func:`bind`.
:func:`log_fields` reads both when a record is formatted (``action``, ``run_id``,
``trace_id``, ``installation``, the OpenTelemetry ids, and what was noted, which wins).
:class:`JsonLogFormatter` writes one JSON object a line (``--log-format json``;
docs/operations.md).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

from langbot_plugin.rpc import tracing
from langbot_plugin.rpc.envelope import Request

__all__ = ["JsonLogFormatter", "log_fields", "note", "serving"]

_request: ContextVar[Request | None] = ContextVar("lbp_log_request", default=None)
_bound: ContextVar[Mapping[str, str] | None] = ContextVar("lbp_log_fields", default=None)


def serving(request: Request) -> None:
    """Mark the current task as serving ``request`` (the session calls this)."""
    _request.set(request)


def note(**fields: str | None) -> None:
    """Add fields to every line the current task (and tasks it starts) writes from now.

    Each request is served in a task of its own, so what a handler notes ends with it.
    """
    _bound.set({**(_bound.get() or {}), **{k: v for k, v in fields.items() if v}})


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def log_fields() -> dict[str, str]:
    """The fields the current task knows (empty outside any request)."""
    fields: dict[str, str] = {}
    request = _request.get()
    if request is not None:
        fields["action"] = request.action
        data: Any = request.data
        run: Any = data.get("context") if isinstance(data, dict) else None
        run = run if isinstance(run, dict) else {}
        runtime: Any = run.get("runtime")
        runtime = runtime if isinstance(runtime, dict) else {}
        run_id = _text(data.get("run_id")) or _text(run.get("run_id"))
        trace_id = _text(data.get("trace_id")) or _text(runtime.get("trace_id"))
        installation = _text((request.context or {}).get("installation_uuid"))
        for key, value in (
            ("run_id", run_id),
            ("trace_id", trace_id),
            ("installation", installation),
        ):
            if value is not None:
                fields[key] = value
    traced = tracing.active()
    if traced is not None:
        fields.update(traced.ids())
    fields.update(_bound.get() or {})
    return fields


class JsonLogFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message and the task's fields."""

    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, object] = {
            "ts": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        payload.update(log_fields())
        extra = getattr(record, "lbp_fields", None)
        if isinstance(extra, dict):
            payload.update(extra)  # type: ignore[arg-type]
        if record.exc_info:
            payload["exc"] = self.formatException(record.exc_info)
        elif record.exc_text:
            payload["exc"] = record.exc_text
        return json.dumps(payload, ensure_ascii=False, default=str)
