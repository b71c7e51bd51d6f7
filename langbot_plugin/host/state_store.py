"""Persistent runner state: small JSON values under scoped keys, on SQLite.

A runner keeps pointers it needs across runs (``external.session_id``, checkpoints,
preferences) in the ``conversation``, ``actor``, ``subject`` or ``runner`` scope, under
a key derived from the run's identities
(:meth:`langbot_plugin.host.grants.RunScope.state_key`), never from the runner. The
limits are the constructor's arguments; ``conversation_id`` is an alias of
``external.conversation_id``, as in the 4.11.2 host. Clearing a conversation drops
every runner's conversation-scope values in it.
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from langbot_plugin.host.errors import StateQuotaError
from langbot_plugin.host.sqlite import HostDatabase
from langbot_plugin.rpc.errors import InvalidParamsError, MessageTooLargeError

__all__ = [
    "KEY_ALIASES",
    "MAX_KEYS_PER_SCOPE",
    "MAX_KEY_CHARS",
    "MAX_LIST",
    "MAX_VALUE_BYTES",
    "StateStore",
    "checked_key",
]

MAX_VALUE_BYTES = 256 * 1024
MAX_KEY_CHARS = 256
MAX_KEYS_PER_SCOPE = 1000
MAX_LIST = 100
KEY_ALIASES = {"conversation_id": "external.conversation_id"}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runner_state (
    scope_key  TEXT NOT NULL,
    state_key  TEXT NOT NULL,
    scope      TEXT NOT NULL,
    runner_id  TEXT,
    value_json TEXT NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (scope_key, state_key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS conversation_state (
    conversation_ref TEXT NOT NULL,
    scope_key        TEXT NOT NULL,
    PRIMARY KEY (conversation_ref, scope_key)
) WITHOUT ROWID;
"""


def checked_key(key: object, limit: int, area: str) -> str:
    """``key`` if it is a string of 1 to ``limit`` characters without control characters
    (``area`` names the store in the refusal)."""
    if not isinstance(key, str) or not key:
        raise InvalidParamsError("key must be a non-empty string", details={"key": key})
    if len(key) > limit:
        raise MessageTooLargeError(
            f"{area} key is {len(key)} characters, the limit is {limit}",
            details={"limit": limit, "size": len(key)},
        )
    if any(ord(c) < 32 or ord(c) == 127 for c in key):
        raise InvalidParamsError(f"{area} key contains control characters")
    return key


class StateStore:
    """Scoped JSON values (see the module docstring for scopes and limits)."""

    def __init__(
        self,
        db: HostDatabase,
        *,
        max_value_bytes: int = MAX_VALUE_BYTES,
        max_key_chars: int = MAX_KEY_CHARS,
        max_keys_per_scope: int = MAX_KEYS_PER_SCOPE,
    ) -> None:
        self.db = db
        self.max_value_bytes = max_value_bytes
        self.max_key_chars = max_key_chars
        self.max_keys_per_scope = max_keys_per_scope
        db.ensure(_SCHEMA)

    # ------------------------------------------------------------------ checks

    def key(self, key: object) -> str:
        """The stored form of ``key`` (alias applied), or :class:`InvalidParamsError`."""
        key = checked_key(key, self.max_key_chars, "state")
        return KEY_ALIASES.get(key, key)

    def encode(self, value: Any) -> str:
        """``value`` as JSON within the size limit."""
        try:
            text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        except (TypeError, ValueError) as exc:
            raise InvalidParamsError(f"state value is not JSON-serializable: {exc}") from None
        size = len(text.encode("utf-8"))
        if size > self.max_value_bytes:
            raise MessageTooLargeError(
                f"Value size {size} bytes exceeds limit {self.max_value_bytes} bytes",
                details={"limit": self.max_value_bytes, "size": size},
            )
        return text

    # ------------------------------------------------------------------ calls

    async def get(self, scope_key: str, key: str) -> Any:
        """The value, or ``None`` when the key is not set."""
        row = await self.db.one(
            "SELECT value_json FROM runner_state WHERE scope_key = ? AND state_key = ?",
            (scope_key, self.key(key)),
        )
        return None if row is None else json.loads(row[0])

    async def set(
        self,
        scope_key: str,
        key: str,
        value: Any,
        *,
        scope: str,
        runner_id: str | None = None,
        conversation_ref: str | None = None,
    ) -> None:
        """Store ``value``; refuses a new key once the scope is full. ``conversation_ref``
        (conversation scope) lets :meth:`clear_conversation` find it."""
        stored = self.key(key)
        text = self.encode(value)
        limit = self.max_keys_per_scope

        def write(conn: sqlite3.Connection) -> None:
            exists = conn.execute(
                "SELECT 1 FROM runner_state WHERE scope_key = ? AND state_key = ?",
                (scope_key, stored),
            ).fetchone()
            if exists is None:
                (count,) = conn.execute(
                    "SELECT COUNT(*) FROM runner_state WHERE scope_key = ?", (scope_key,)
                ).fetchone()
                if count >= limit:
                    raise StateQuotaError(
                        f"{scope} state already holds {limit} keys",
                        details={"limit": limit, "scope": scope},
                    )
            conn.execute(
                "INSERT INTO runner_state (scope_key, state_key, scope, runner_id, value_json,"
                " updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (scope_key, state_key)"
                " DO UPDATE SET value_json = excluded.value_json,"
                " updated_at = excluded.updated_at",
                (scope_key, stored, scope, runner_id, text, time.time()),
            )
            if conversation_ref is not None:
                conn.execute(
                    "INSERT OR IGNORE INTO conversation_state (conversation_ref, scope_key)"
                    " VALUES (?, ?)",
                    (conversation_ref, scope_key),
                )

        await self.db.run(write)

    async def delete(self, scope_key: str, key: str) -> bool:
        """Remove a key; ``True`` if it existed."""
        removed = await self.db.write(
            "DELETE FROM runner_state WHERE scope_key = ? AND state_key = ?",
            (scope_key, self.key(key)),
        )
        return removed > 0

    async def list_keys(
        self, scope_key: str, prefix: str | None = None, limit: int = MAX_LIST
    ) -> tuple[list[str], bool]:
        """Keys in key order (those starting with ``prefix``), at most ``limit`` (max
        100), and whether more follow."""
        if limit <= 0:
            raise InvalidParamsError("limit must be > 0", details={"limit": limit})
        limit = min(limit, MAX_LIST)
        start = prefix or ""
        rows = await self.db.all(
            "SELECT state_key FROM runner_state WHERE scope_key = ?"
            " AND substr(state_key, 1, ?) = ? ORDER BY state_key LIMIT ?",
            (scope_key, len(start), start, limit + 1),
        )
        keys = [str(row[0]) for row in rows]
        return keys[:limit], len(keys) > limit

    async def snapshot(self, scope_key: str) -> dict[str, Any]:
        """Every value of one scope key (what a new run's ``ctx.state`` shows)."""
        rows = await self.db.all(
            "SELECT state_key, value_json FROM runner_state WHERE scope_key = ? ORDER BY state_key",
            (scope_key,),
        )
        return {str(r[0]): json.loads(r[1]) for r in rows}

    async def clear(self, scope_key: str) -> int:
        """Drop every value of one scope key; returns how many there were."""
        return await self.db.write("DELETE FROM runner_state WHERE scope_key = ?", (scope_key,))

    async def clear_conversation(self, conversation_ref: str) -> int:
        """Drop the conversation-scope values of every runner and binding of one
        conversation (resume ids included); returns how many there were."""

        def remove(conn: sqlite3.Connection) -> int:
            removed = conn.execute(
                "DELETE FROM runner_state WHERE scope_key IN (SELECT scope_key FROM"
                " conversation_state WHERE conversation_ref = ?)",
                (conversation_ref,),
            ).rowcount
            conn.execute(
                "DELETE FROM conversation_state WHERE conversation_ref = ?", (conversation_ref,)
            )
            return removed

        return await self.db.run(remove)
