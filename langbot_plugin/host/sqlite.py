"""One SQLite database shared by the host's stores (state, transcript, event log).

The stdlib ``sqlite3`` module blocks, so every statement runs in a worker thread
(``anyio.to_thread``) and a lock serialises access to the single connection. Each
call is one transaction: committed when the function returns, rolled back when it
raises. ``":memory:"`` (the default) gives a private in-memory database, handy for
tests and the local host; a file path gives one that survives restarts (WAL mode).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio.to_thread

__all__ = ["HostDatabase"]

T = TypeVar("T")


class HostDatabase:
    """A thread-guarded SQLite connection with async, transactional calls."""

    def __init__(self, path: str | os.PathLike[str] = ":memory:") -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False)
        self._conn.row_factory = sqlite3.Row
        if self.path != ":memory:":
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
        self._closed = False

    def ensure(self, schema: str) -> None:
        """Create tables and indexes (idempotent ``CREATE ... IF NOT EXISTS`` script)."""
        with self._lock:
            self._conn.executescript(schema)
            self._conn.commit()

    def _transaction(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            if self._closed:
                raise RuntimeError("the host database is closed")
            try:
                result = fn(self._conn)
            except BaseException:
                self._conn.rollback()
                raise
            self._conn.commit()
            return result

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(connection)`` as one transaction in a worker thread."""
        return await anyio.to_thread.run_sync(self._transaction, fn)

    async def one(self, sql: str, args: Sequence[Any] = ()) -> Any:
        """The first row of one query (``None`` if none), as its own transaction."""
        return await self.run(lambda conn: conn.execute(sql, args).fetchone())

    async def all(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        """Every row of one query, as its own transaction."""
        return await self.run(lambda conn: conn.execute(sql, args).fetchall())

    async def write(self, sql: str, args: Sequence[Any] = ()) -> int:
        """Run one statement as its own transaction; the number of rows it changed."""
        return await self.run(lambda conn: conn.execute(sql, args).rowcount)

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._conn.close()
