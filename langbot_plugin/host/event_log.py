"""The event log: what happened in a conversation, as ``event_get``/``event_page`` see it.

The host records each event that starts a run (``message.received`` ...), steering
input handed to a run, and whatever else it wants runners to be able to look up.
Records have the ``AgentEventRecord`` shape; large inputs stay out (a summary of at
most ``max_summary_chars`` and an optional ``input_ref``/``raw_ref``). Paging uses
the cursor rules of :mod:`langbot_plugin.host.paging` (newest first).

A run sees the events of its own conversation and thread (and bot/workspace when
known) plus events recorded by itself. Summaries and metadata are redacted before they
are stored (:mod:`langbot_plugin.rpc.redaction`).
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from typing import Any

from langbot_plugin.host.grants import RunScope
from langbot_plugin.host.paging import PageWindow, page_answer, scope_sql
from langbot_plugin.host.sqlite import HostDatabase
from langbot_plugin.rpc.redaction import redact, redact_data

__all__ = ["MAX_SUMMARY_CHARS", "EventLogStore"]

MAX_SUMMARY_CHARS = 1000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS event_log (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id        TEXT NOT NULL UNIQUE,
    event_type      TEXT NOT NULL,
    event_time      INTEGER,
    source          TEXT NOT NULL,
    bot_id          TEXT,
    workspace_id    TEXT,
    conversation_id TEXT,
    thread_id       TEXT,
    actor_type      TEXT,
    actor_id        TEXT,
    actor_name      TEXT,
    subject_type    TEXT,
    subject_id      TEXT,
    input_summary   TEXT,
    input_ref       TEXT,
    raw_ref         TEXT,
    run_id          TEXT,
    runner_id       TEXT,
    created_at      REAL NOT NULL,
    metadata        TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS event_log_by_conversation ON event_log (conversation_id, seq);
"""


def _record(row: sqlite3.Row) -> dict[str, Any]:
    """The ``AgentEventRecord`` of a row: every column but the run that recorded it."""
    record: dict[str, Any] = dict(row)
    del record["run_id"], record["runner_id"]
    record.update(
        cursor=str(row["seq"]),
        created_at=int(row["created_at"]),
        metadata=json.loads(row["metadata"]),
    )
    return record


class EventLogStore:
    """Append, look up and page event records."""

    def __init__(self, db: HostDatabase, *, max_summary_chars: int = MAX_SUMMARY_CHARS) -> None:
        self.db = db
        self.max_summary_chars = max_summary_chars
        db.ensure(_SCHEMA)

    async def append(
        self,
        scope: RunScope,
        *,
        event_type: str,
        source: str,
        event_id: str | None = None,
        event_time: int | None = None,
        actor_name: str | None = None,
        input_summary: str | None = None,
        input_ref: str | None = None,
        raw_ref: str | None = None,
        run_id: str | None = None,
        runner_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Record one event in the scope's conversation; returns the record."""
        if input_summary is not None:
            input_summary = redact(input_summary)
        if input_summary is not None and len(input_summary) > self.max_summary_chars:
            input_summary = input_summary[: self.max_summary_chars - 3] + "..."
        now = time.time()
        values = {
            "event_id": event_id or f"evt:{uuid.uuid4()}",
            "event_type": event_type,
            "event_time": event_time if event_time is not None else int(now),
            "source": source,
            "bot_id": scope.bot_id,
            "workspace_id": scope.workspace_id,
            "conversation_id": scope.conversation_id,
            "thread_id": scope.thread_id,
            "actor_type": scope.actor_type,
            "actor_id": scope.actor_id,
            "actor_name": actor_name,
            "subject_type": scope.subject_type,
            "subject_id": scope.subject_id,
            "input_summary": input_summary,
            "input_ref": input_ref,
            "raw_ref": raw_ref,
            "run_id": run_id,
            "runner_id": runner_id,
            "created_at": now,
            "metadata": json.dumps(redact_data(metadata or {}), ensure_ascii=False),
        }
        columns = ", ".join(values)
        marks = ", ".join("?" for _ in values)

        def insert(conn: sqlite3.Connection) -> dict[str, Any]:
            cursor = conn.execute(
                f"INSERT INTO event_log ({columns}) VALUES ({marks})", list(values.values())
            )
            row = conn.execute(
                "SELECT * FROM event_log WHERE seq = ?", (cursor.lastrowid,)
            ).fetchone()
            return _record(row)

        return await self.db.run(insert)

    async def get(self, event_id: str) -> tuple[dict[str, Any], str | None] | None:
        """The record and the id of the run that recorded it, or ``None``."""
        row = await self.db.one("SELECT * FROM event_log WHERE event_id = ?", (event_id,))
        return None if row is None else (_record(row), row["run_id"])

    async def page(
        self, scope: RunScope, window: PageWindow, *, event_types: list[str] | None = None
    ) -> dict[str, Any]:
        """One page of the scope's conversation events, filtered by type."""
        if scope.conversation_id is None:
            return page_answer(window, [])
        where, args = scope_sql(scope)
        if event_types:
            where += f" AND event_type IN ({', '.join('?' for _ in event_types)})"
            args.extend(event_types)
        tail, tail_args = window.sql()
        rows = await self.db.all(
            f"SELECT * FROM event_log WHERE {where}{tail}", [*args, *tail_args]
        )
        return page_answer(window, [_record(row) for row in rows])

    async def latest_seq(self, scope: RunScope) -> int | None:
        """The newest event's ``seq`` in the scope's conversation."""
        if scope.conversation_id is None:
            return None
        row = await self.db.one(
            "SELECT MAX(seq) FROM event_log WHERE conversation_id = ? AND thread_id IS ?",
            (scope.conversation_id, scope.thread_id),
        )
        return None if row[0] is None else int(row[0])
