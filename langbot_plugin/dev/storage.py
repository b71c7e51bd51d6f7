"""Plugin and workspace storage of a ``lbp dev`` session, kept on disk between sessions.

:class:`PersistentStorage` is the ``storage`` mapping of a
:class:`~langbot_plugin.host.LocalHost` (``(owner_type, owner, key) -> bytes``) that
writes every change through to a small SQLite file, so what a plugin stored is there
the next time ``lbp dev`` starts (``--fresh`` removes the file).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

__all__ = ["PersistentStorage"]

Key = tuple[str, str, str]


class PersistentStorage(dict[Key, bytes]):
    """A dict of storage values, written through to ``path``."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS storage (owner_type TEXT, owner TEXT, key TEXT, "
            "value BLOB, PRIMARY KEY (owner_type, owner, key))"
        )
        for owner_type, owner, key, value in self._db.execute(
            "SELECT owner_type, owner, key, value FROM storage"
        ):
            super().__setitem__((owner_type, owner, key), bytes(value))

    def __setitem__(self, key: Key, value: bytes) -> None:
        self._db.execute("INSERT OR REPLACE INTO storage VALUES (?, ?, ?, ?)", (*key, value))
        super().__setitem__(key, value)

    def __delitem__(self, key: Key) -> None:
        self._db.execute("DELETE FROM storage WHERE owner_type = ? AND owner = ? AND key = ?", key)
        super().__delitem__(key)

    def pop(self, key: Key, default: bytes | None = None) -> bytes | None:  # type: ignore[override]
        if key in self:
            value = self[key]
            del self[key]
            return value
        return default

    def close(self) -> None:
        self._db.close()
