"""The transcript: each conversation's messages as the history APIs return them.

The host appends the user's message when a run starts and the runner's completed
messages as they arrive; a runner pages it with ``history_page``
(:mod:`langbot_plugin.host.paging`) and searches it with ``history_search``
(case-insensitive substring, newest first). Items have the 4.11.2 host's
``TranscriptItem`` shape (``content`` the text projection, cut visibly over
``max_content_chars``; ``content_json`` the structured message), are scoped by the
run's :class:`~langbot_plugin.host.grants.RunScope` and redacted before they are stored.
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

__all__ = ["MAX_CONTENT_CHARS", "TranscriptStore"]

MAX_CONTENT_CHARS = 16_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS transcript (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    transcript_id   TEXT NOT NULL UNIQUE,
    event_id        TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    thread_id       TEXT,
    bot_id          TEXT,
    workspace_id    TEXT,
    role            TEXT NOT NULL,
    item_type       TEXT NOT NULL,
    content         TEXT,
    content_json    TEXT,
    attachment_refs TEXT,
    run_id          TEXT,
    runner_id       TEXT,
    created_at      REAL NOT NULL,
    metadata        TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS transcript_by_conversation ON transcript (conversation_id, seq);
"""

#: The columns of an item, in the order its answer lists them.
_COLUMNS = (
    "transcript_id, event_id, bot_id, workspace_id, conversation_id, thread_id, role,"
    " item_type, content, content_json, seq, created_at, metadata, attachment_refs"
)


def _item(row: sqlite3.Row, include_attachments: bool) -> dict[str, Any]:
    item: dict[str, Any] = dict(row)
    refs = row["attachment_refs"]
    item.update(
        content_json=json.loads(row["content_json"]) if row["content_json"] else None,
        cursor=str(row["seq"]),
        created_at=int(row["created_at"]),
        metadata=json.loads(row["metadata"]),
        attachment_refs=json.loads(refs) if include_attachments and refs else [],
    )
    return item


class TranscriptStore:
    """Append, page and search conversation transcripts."""

    def __init__(self, db: HostDatabase, *, max_content_chars: int = MAX_CONTENT_CHARS) -> None:
        self.db = db
        self.max_content_chars = max_content_chars
        db.ensure(_SCHEMA)

    def _content(self, content: str | None) -> str | None:
        if content is None or len(content) <= self.max_content_chars:
            return content
        return (
            content[: self.max_content_chars]
            + f"\n\n[truncated by the host: {len(content)} characters, "
            f"{self.max_content_chars} kept in the transcript]"
        )

    async def append(
        self,
        scope: RunScope,
        *,
        role: str,
        content: str | None,
        content_json: dict[str, Any] | None = None,
        event_id: str | None = None,
        item_type: str = "message",
        attachment_refs: list[dict[str, Any]] | None = None,
        run_id: str | None = None,
        runner_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Append one item to the scope's conversation; returns it (with ``seq``/``cursor``)."""
        if scope.conversation_id is None:
            raise ValueError("a transcript item needs a conversation_id")
        transcript_id = str(uuid.uuid4())
        values = (
            transcript_id,
            event_id or f"transcript:{transcript_id}",
            scope.conversation_id,
            scope.thread_id,
            scope.bot_id,
            scope.workspace_id,
            role,
            item_type,
            self._content(None if content is None else redact(content)),
            json.dumps(redact_data(content_json), ensure_ascii=False)
            if content_json is not None
            else None,
            json.dumps(attachment_refs, ensure_ascii=False) if attachment_refs else None,
            run_id,
            runner_id,
            time.time(),
            json.dumps(redact_data(metadata or {}), ensure_ascii=False),
        )

        def insert(conn: sqlite3.Connection) -> dict[str, Any]:
            cursor = conn.execute(
                "INSERT INTO transcript (transcript_id, event_id, conversation_id, thread_id,"
                " bot_id, workspace_id, role, item_type, content, content_json, attachment_refs,"
                " run_id, runner_id, created_at, metadata)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM transcript WHERE seq = ?", (cursor.lastrowid,)
            ).fetchone()
            return _item(row, include_attachments=True)

        return await self.db.run(insert)

    async def page(
        self, scope: RunScope, window: PageWindow, *, include_attachments: bool = False
    ) -> dict[str, Any]:
        """One page of the scope's conversation (``{items, next_cursor, prev_cursor,
        has_more}``); an empty page when the run has no conversation."""
        if scope.conversation_id is None:
            return page_answer(window, [])
        where, args = scope_sql(scope)
        tail, tail_args = window.sql()
        rows = await self.db.all(
            f"SELECT {_COLUMNS} FROM transcript WHERE {where}{tail}", [*args, *tail_args]
        )
        return page_answer(window, [_item(row, include_attachments) for row in rows])

    async def search(
        self,
        scope: RunScope,
        query: str,
        *,
        roles: list[str] | None = None,
        item_types: list[str] | None = None,
        top_k: int = 10,
    ) -> list[dict[str, Any]]:
        """Items whose text contains ``query`` (case-insensitive), newest first."""
        if scope.conversation_id is None:
            return []
        where, args = scope_sql(scope)
        escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        where += " AND content LIKE ? ESCAPE '\\'"
        args.append(f"%{escaped}%")
        for column, values in (("role", roles), ("item_type", item_types)):
            if values:
                where += f" AND {column} IN ({', '.join('?' for _ in values)})"
                args.extend(values)
        rows = await self.db.all(
            f"SELECT {_COLUMNS} FROM transcript WHERE {where} ORDER BY seq DESC LIMIT ?",
            [*args, max(1, min(top_k, 100))],
        )
        return [_item(row, include_attachments=True) for row in rows]

    async def latest(self, scope: RunScope) -> tuple[str | None, int]:
        """The cursor of the scope's newest item (``None`` if empty) and the item count."""
        if scope.conversation_id is None:
            return None, 0
        where, args = scope_sql(scope)
        newest, count = await self.db.one(
            f"SELECT MAX(seq), COUNT(*) FROM transcript WHERE {where}", args
        )
        return (None if newest is None else str(newest)), int(count)

    async def clear(self, scope: RunScope) -> int:
        """Remove the scope's conversation history; returns the number of items."""
        if scope.conversation_id is None:
            return 0
        where, args = scope_sql(scope)
        return await self.db.write(f"DELETE FROM transcript WHERE {where}", args)
