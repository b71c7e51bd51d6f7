"""The audit of each run: what it was granted, every host call it made, every refusal,
the external harness session ids it kept, and how it ended.

Append-only, bounded (``max_entries_per_run``; later entries are counted in
``run.ended``), redacted (:mod:`langbot_plugin.rpc.redaction`) and written to the
host's SQLite database in batches (:meth:`AuditLog.flush`, on a run's end and before
every read). Read a page at a time with :mod:`langbot_plugin.host.paging`'s cursors, or
one run as JSON lines (:meth:`AuditLog.export_jsonl`). An entry::

    {"seq": 12, "run_id": "...", "at": 1764611234.5, "origin": "host", "kind": "call",
     "action": "invoke_llm", "resource": "m-1", "code": null, "duration_ms": 0.8,
     "detail": {}, "cursor": "12", "grant": "model:invoke"}

``kind``: ``run.started``, ``call`` (``grant`` or the refusal's ``code``), ``session``
(an ``external.*`` state key the run wrote) or ``run.ended``; ``origin``: ``host`` or
``runtime``.
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from langbot_plugin.host.paging import PageWindow, page_answer
from langbot_plugin.host.sqlite import HostDatabase
from langbot_plugin.rpc.redaction import redact, redact_data

__all__ = ["MAX_ENTRIES_PER_RUN", "AuditLog"]

MAX_ENTRIES_PER_RUN = 2000
#: Pending entries written at once even before a run ends.
_FLUSH_AT = 256

_SCHEMA = """
CREATE TABLE IF NOT EXISTS run_audit (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      TEXT NOT NULL,
    at          REAL NOT NULL,
    origin      TEXT NOT NULL,
    kind        TEXT NOT NULL,
    action      TEXT,
    resource    TEXT,
    grant_name  TEXT,
    code        TEXT,
    duration_ms REAL,
    detail      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS run_audit_by_run ON run_audit (run_id, seq);
"""

_Row = tuple[
    str, float, str, str, str | None, str | None, str | None, str | None, float | None, str
]


def _entry(row: sqlite3.Row) -> dict[str, Any]:
    entry: dict[str, Any] = dict(row)
    entry.update(
        cursor=str(row["seq"]), grant=entry.pop("grant_name"), detail=json.loads(row["detail"])
    )
    return entry


class AuditLog:
    """Per-run audit entries on SQLite (see the module docstring)."""

    def __init__(self, db: HostDatabase, *, max_entries_per_run: int = MAX_ENTRIES_PER_RUN):
        self.db = db
        self.max_entries_per_run = max_entries_per_run
        self._pending: list[_Row] = []
        self._counts: dict[str, int] = {}
        self._dropped: dict[str, int] = {}
        db.ensure(_SCHEMA)

    def record(
        self,
        run_id: str,
        kind: str,
        *,
        action: str | None = None,
        resource: object = None,
        grant: str | None = None,
        code: str | None = None,
        duration_ms: float | None = None,
        detail: dict[str, Any] | None = None,
        origin: str = "host",
        at: float | None = None,
    ) -> None:
        """Add one entry to ``run_id``'s audit (kept until written by :meth:`flush`)."""
        count = self._counts.get(run_id, 0)
        if count >= self.max_entries_per_run and kind != "run.ended":
            self._dropped[run_id] = self._dropped.get(run_id, 0) + 1
            return
        self._counts[run_id] = count + 1
        self._pending.append(
            (
                run_id,
                time.time() if at is None else at,
                origin,
                kind,
                action,
                None if resource is None else redact(str(resource)),
                grant,
                code,
                None if duration_ms is None else round(duration_ms, 3),
                json.dumps(redact_data(detail or {}), ensure_ascii=False, default=str),
            )
        )

    def dropped(self, run_id: str) -> int:
        """Entries of ``run_id`` not kept because its audit was full."""
        return self._dropped.get(run_id, 0)

    def should_flush(self) -> bool:
        return len(self._pending) >= _FLUSH_AT

    def forget_counts(self, run_id: str) -> None:
        """The run is over: its counters are no longer needed."""
        self._counts.pop(run_id, None)
        self._dropped.pop(run_id, None)

    async def flush(self) -> None:
        """Write every pending entry (one transaction)."""
        if not self._pending:
            return
        rows, self._pending = self._pending, []

        def insert(conn: sqlite3.Connection) -> None:
            conn.executemany(
                "INSERT INTO run_audit (run_id, at, origin, kind, action, resource, grant_name,"
                " code, duration_ms, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )

        await self.db.run(insert)

    async def page(
        self,
        run_id: str,
        *,
        before_cursor: str | None = None,
        after_cursor: str | None = None,
        limit: int = 100,
        direction: str = "forward",
    ) -> dict[str, Any]:
        """One page of ``run_id``'s entries: ``{items, next_cursor, prev_cursor, has_more}``."""
        await self.flush()
        window = PageWindow.of(before_cursor, after_cursor, limit, direction)
        tail, args = window.sql()
        rows = await self.db.all(f"SELECT * FROM run_audit WHERE run_id = ?{tail}", [run_id, *args])
        return page_answer(window, [_entry(row) for row in rows])

    async def entries(self, run_id: str) -> list[dict[str, Any]]:
        """Every entry of ``run_id``, oldest first."""
        await self.flush()
        rows = await self.db.all("SELECT * FROM run_audit WHERE run_id = ? ORDER BY seq", (run_id,))
        return [_entry(row) for row in rows]

    async def export_jsonl(self, run_id: str) -> str:
        """``run_id``'s audit as JSON lines (one entry per line, oldest first)."""
        lines = [
            json.dumps(e, ensure_ascii=False, sort_keys=True) for e in await self.entries(run_id)
        ]
        return "".join(f"{line}\n" for line in lines)
