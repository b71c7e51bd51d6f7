"""Artifact uploads (seed 003's Protocol v1, our host library): the bytes of an artifact
too large for one ``artifact.created`` result, sent in pieces before that result
commits them (:meth:`~langbot_plugin.host.artifacts.ArtifactStore.create` with an
``upload_id``). An upload is owned by its run (another run gets ``not_found``), appended
in order (a wrong ``offset`` is ``invalid_params`` with the current ``size_bytes``),
bounded (:data:`MAX_OPEN_UPLOADS` a run) and dropped if not committed within
:data:`UPLOAD_TTL`.
"""

from __future__ import annotations

import base64
import binascii
import sqlite3
import uuid
from collections.abc import Callable

from langbot_plugin.host.sqlite import HostDatabase
from langbot_plugin.protocol.host_api.artifacts import (
    MAX_ARTIFACT_BYTES,
    MAX_UPLOAD_PIECE_BYTES,
    ArtifactUpload,
)
from langbot_plugin.rpc.errors import (
    InvalidParamsError,
    MessageTooLargeError,
    NotFoundError,
    TooManyRequestsError,
)

__all__ = ["MAX_OPEN_UPLOADS", "UPLOAD_TTL", "ArtifactUploads"]

MAX_OPEN_UPLOADS = 4
UPLOAD_TTL = 3600.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS artifact_upload (
    upload_id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS artifact_upload_part (
    upload_id TEXT NOT NULL,
    offset INTEGER NOT NULL,
    content BLOB NOT NULL,
    PRIMARY KEY (upload_id, offset)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS artifact_upload_run ON artifact_upload (run_id);
"""


def _missing(upload_id: str) -> NotFoundError:
    return NotFoundError(
        f"upload {upload_id!r} not found for this run", details={"upload_id": upload_id}
    )


def decode_piece(raw: str, invalid: str, over: str) -> bytes:
    """``raw`` decoded from base64, refused when it is not base64 (``invalid``) or holds
    more than :data:`MAX_UPLOAD_PIECE_BYTES` (``over``, formatted with size and limit)."""
    try:
        piece = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidParamsError(invalid) from None
    size, limit = len(piece), MAX_UPLOAD_PIECE_BYTES
    if size > limit:
        raise MessageTooLargeError(
            over.format(size=size, limit=limit), details={"limit": limit, "actual": size}
        )
    return piece


class ArtifactUploads:
    """Uploads in progress, in the host's database (see the module)."""

    def __init__(
        self,
        db: HostDatabase,
        *,
        clock: Callable[[], float],
        max_bytes: int = MAX_ARTIFACT_BYTES,
    ) -> None:
        self.db = db
        self.clock = clock
        self.max_bytes = max_bytes
        db.ensure(_SCHEMA)

    async def begin(self, run_id: str) -> ArtifactUpload:
        upload_id = f"upl-{uuid.uuid4().hex}"
        now = self.clock()

        def insert(conn: sqlite3.Connection) -> None:
            (count,) = conn.execute(
                "SELECT COUNT(*) FROM artifact_upload WHERE run_id = ?", (run_id,)
            ).fetchone()
            if count >= MAX_OPEN_UPLOADS:
                raise TooManyRequestsError(
                    f"a run may have at most {MAX_OPEN_UPLOADS} uploads open: commit one first",
                    details={"limit": MAX_OPEN_UPLOADS},
                )
            conn.execute(
                "INSERT INTO artifact_upload VALUES (?, ?, 0, ?)", (upload_id, run_id, now)
            )

        await self.db.run(insert)
        return ArtifactUpload(upload_id=upload_id, max_bytes=self.max_bytes)

    async def append(
        self, run_id: str, upload_id: str, offset: int, content_base64: str
    ) -> ArtifactUpload:
        piece = decode_piece(
            content_base64,
            "content_base64 is not valid base64",
            "an append carries at most {limit} bytes, not {size}",
        )
        limit = self.max_bytes

        def write(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "SELECT size_bytes FROM artifact_upload WHERE upload_id = ? AND run_id = ?",
                (upload_id, run_id),
            ).fetchone()
            if row is None:
                raise _missing(upload_id)
            size = int(row[0])
            if offset != size:
                raise InvalidParamsError(
                    f"append at offset {offset}, but the upload holds {size} bytes",
                    details={"upload_id": upload_id, "offset": offset, "size_bytes": size},
                )
            if size + len(piece) > limit:
                raise MessageTooLargeError(
                    f"an artifact holds at most {limit} bytes",
                    details={"limit": limit, "actual": size + len(piece)},
                )
            if piece:
                conn.execute(
                    "INSERT INTO artifact_upload_part VALUES (?, ?, ?)", (upload_id, size, piece)
                )
                conn.execute(
                    "UPDATE artifact_upload SET size_bytes = ? WHERE upload_id = ?",
                    (size + len(piece), upload_id),
                )
            return size + len(piece)

        size = await self.db.run(write)
        return ArtifactUpload(upload_id=upload_id, size_bytes=size, max_bytes=limit)

    async def content(self, run_id: str, upload_id: object) -> bytes:
        """The bytes of ``run_id``'s upload, in order (the commit reads them)."""
        if not isinstance(upload_id, str):
            raise InvalidParamsError("upload_id must be a string", details={"upload_id": upload_id})

        def read(conn: sqlite3.Connection) -> bytes:
            row = conn.execute(
                "SELECT 1 FROM artifact_upload WHERE upload_id = ? AND run_id = ?",
                (upload_id, run_id),
            ).fetchone()
            if row is None:
                raise _missing(upload_id)
            parts = conn.execute(
                "SELECT content FROM artifact_upload_part WHERE upload_id = ? ORDER BY offset",
                (upload_id,),
            ).fetchall()
            return b"".join(bytes(part[0]) for part in parts)

        return await self.db.run(read)

    @staticmethod
    def drop(conn: sqlite3.Connection, upload_id: str) -> None:
        """Forget an upload (inside the commit's transaction)."""
        conn.execute("DELETE FROM artifact_upload_part WHERE upload_id = ?", (upload_id,))
        conn.execute("DELETE FROM artifact_upload WHERE upload_id = ?", (upload_id,))

    async def purge(self, now: float | None = None) -> int:
        """Drop uploads begun more than :data:`UPLOAD_TTL` before ``now``; how many."""
        cutoff = (self.clock() if now is None else now) - UPLOAD_TTL

        def drop(conn: sqlite3.Connection) -> int:
            stale = conn.execute(
                "SELECT upload_id FROM artifact_upload WHERE created_at <= ?", (cutoff,)
            ).fetchall()
            for (upload_id,) in stale:
                self.drop(conn, str(upload_id))
            return len(stale)

        return await self.db.run(drop)
