"""Artifacts our host library keeps for runs (seed 003's Protocol v1): what a runner
created with an ``artifact.created`` result, readable by later runs of the same
conversation through ``artifact_metadata`` / ``artifact_read``.

Stored in the host's SQLite database (bytes once per ``sha256``), bounded
(:data:`MAX_INLINE_BYTES` inline, larger ones uploaded first through
:mod:`langbot_plugin.host.artifact_uploads`; :data:`MAX_ARTIFACTS_PER_RUN`), expiring
(``ttl_seconds``, at most :data:`MAX_TTL`; :meth:`ArtifactStore.purge`) and scoped to
the creating run's conversation: another conversation gets ``not_found``, as for an
id that never existed (docs/protocol-v1.md).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import sqlite3
import uuid
from collections.abc import Callable
from typing import Any

from langbot_plugin.host.artifact_uploads import ArtifactUploads, decode_piece
from langbot_plugin.host.grants import RunScope
from langbot_plugin.host.sqlite import HostDatabase
from langbot_plugin.protocol.host_api.artifacts import (
    MAX_RANGE_READ_BYTES,
    MAX_UPLOAD_PIECE_BYTES,
    ArtifactChunk,
    ArtifactMetadata,
)
from langbot_plugin.rpc.errors import (
    ConflictError,
    InvalidParamsError,
    MessageTooLargeError,
    NotFoundError,
)

__all__ = [
    "DEFAULT_TTL",
    "MAX_ARTIFACTS_PER_RUN",
    "MAX_INLINE_BYTES",
    "MAX_TTL",
    "ArtifactStore",
]

#: Bytes one ``artifact.created`` may carry inline (its base64 must fit one result, as
#: an upload's piece must fit one call).
MAX_INLINE_BYTES = MAX_UPLOAD_PIECE_BYTES
MAX_ARTIFACTS_PER_RUN = 20
DEFAULT_TTL = 24 * 3600.0
MAX_TTL = 30 * 24 * 3600.0

_MIME = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$"
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS artifact_blob (
    sha256 TEXT PRIMARY KEY,
    content BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS artifact (
    scope_key TEXT NOT NULL,
    artifact_id TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    artifact_type TEXT NOT NULL,
    mime_type TEXT NOT NULL,
    name TEXT,
    size_bytes INTEGER NOT NULL,
    conversation_id TEXT,
    thread_id TEXT,
    bot_id TEXT,
    workspace_id TEXT,
    run_id TEXT,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    metadata TEXT NOT NULL,
    PRIMARY KEY (scope_key, artifact_id)
);
CREATE INDEX IF NOT EXISTS artifact_run ON artifact (run_id);
"""


#: The columns an ``artifact_metadata`` answer shows (each of its fields is one).
_ANSWERED = ", ".join(ArtifactMetadata.model_fields)

#: An id a runner may give its artifact (else the host makes one).
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")


def _scope_key(scope: RunScope) -> str:
    return json.dumps([scope.conversation_id, scope.thread_id, scope.bot_id, scope.workspace_id])


def _invalid(message: str, **details: Any) -> InvalidParamsError:
    return InvalidParamsError(message, details=details)


def _content(data: dict[str, Any]) -> bytes:
    raw = data.get("content_base64")
    if not isinstance(raw, str):
        raise _invalid("artifact.created needs content_base64 (the bytes, base64)")
    return decode_piece(
        raw,
        "artifact.created content_base64 is not valid base64",
        "artifact.created carries {size} bytes, over {limit}",
    )


class ArtifactStore:
    """Artifacts by id, with their conversation scope and expiry (see the module)."""

    def __init__(self, db: HostDatabase, *, clock: Callable[[], float]) -> None:
        self.db = db
        self.clock = clock
        #: Artifacts sent in pieces before their ``artifact.created`` commits them.
        self.uploads = ArtifactUploads(db, clock=clock)
        db.ensure(_SCHEMA)

    async def _bytes(self, run_id: str, data: dict[str, Any]) -> tuple[bytes, str | None]:
        """The artifact's bytes: inline, or the run's upload (and its id)."""
        if "upload_id" in data and "content_base64" not in data:
            upload_id = data["upload_id"]
            return await self.uploads.content(run_id, upload_id), str(upload_id)
        return _content(data), None

    async def create(self, scope: RunScope, run_id: str, data: dict[str, Any]) -> ArtifactMetadata:
        """Keep the artifact an ``artifact.created`` result describes (``data``)."""
        kind = data.get("artifact_type")
        if not isinstance(kind, str) or not kind:
            raise _invalid("artifact.created needs artifact_type (image, file, tool_result...)")
        mime = data.get("mime_type") or "application/octet-stream"
        if not isinstance(mime, str) or not _MIME.match(mime):
            raise _invalid(f"mime_type {mime!r} is not type/subtype", mime_type=mime)
        content, upload_id = await self._bytes(run_id, data)
        digest = hashlib.sha256(content).hexdigest()
        declared = data.get("sha256")
        if declared is not None and declared != digest:
            raise _invalid("sha256 does not match the content", sha256=declared)
        ttl = data.get("ttl_seconds", DEFAULT_TTL)
        if not isinstance(ttl, int | float) or isinstance(ttl, bool) or ttl <= 0:
            raise _invalid("ttl_seconds must be a positive number", ttl_seconds=ttl)
        artifact_id = data.get("artifact_id") or f"art-{uuid.uuid4().hex}"
        if not isinstance(artifact_id, str) or not _ID.match(artifact_id):
            raise _invalid(
                "artifact_id must be 1-128 letters, digits, '.', '_', ':' or '-'",
                artifact_id=artifact_id,
            )
        if scope.conversation_id is None:
            raise _invalid("a run without a conversation cannot keep artifacts")
        now = self.clock()
        name = data.get("name")
        extra = data.get("metadata")
        record = ArtifactMetadata(
            artifact_id=artifact_id,
            artifact_type=kind,
            mime_type=mime,
            name=name if isinstance(name, str) else None,
            size_bytes=len(content),
            sha256=digest,
            created_at=now,
            expires_at=now + min(float(ttl), MAX_TTL),
            run_id=run_id,
            metadata=extra if isinstance(extra, dict) else {},  # pyright: ignore[reportUnknownArgumentType]
        )

        key = _scope_key(scope)

        def insert(conn: sqlite3.Connection) -> None:
            (count,) = conn.execute(
                "SELECT COUNT(*) FROM artifact WHERE run_id = ?", (run_id,)
            ).fetchone()
            if count >= MAX_ARTIFACTS_PER_RUN:
                raise _invalid(
                    f"a run may create at most {MAX_ARTIFACTS_PER_RUN} artifacts",
                    limit=MAX_ARTIFACTS_PER_RUN,
                )
            taken = conn.execute(
                "SELECT 1 FROM artifact WHERE scope_key = ? AND artifact_id = ?",
                (key, artifact_id),
            ).fetchone()
            if taken is not None:
                raise ConflictError(
                    f"artifact {artifact_id!r} exists already in this conversation",
                    details={"artifact_id": artifact_id},
                )
            conn.execute(
                "INSERT OR IGNORE INTO artifact_blob (sha256, content) VALUES (?, ?)",
                (digest, content),
            )
            if upload_id is not None:
                self.uploads.drop(conn, upload_id)
            conn.execute(
                "INSERT INTO artifact VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key, artifact_id, digest, kind, mime, record.name, len(content),
                    scope.conversation_id, scope.thread_id, scope.bot_id, scope.workspace_id,
                    run_id, now, record.expires_at, json.dumps(record.metadata),
                ),
            )  # fmt: skip

        await self.db.run(insert)
        return record

    async def metadata(self, scope: RunScope, artifact_id: str) -> ArtifactMetadata:
        """The artifact, if it is in ``scope``'s conversation and not expired."""
        key = _scope_key(scope)
        now = self.clock()
        row = None
        if scope.conversation_id is not None:
            row = await self.db.one(
                f"SELECT {_ANSWERED} FROM artifact"
                " WHERE scope_key = ? AND artifact_id = ? AND expires_at > ?",
                (key, artifact_id, now),
            )
        if row is None:
            raise NotFoundError(
                f"artifact {artifact_id!r} not found for this run",
                details={"artifact_id": artifact_id},
            )
        return ArtifactMetadata.model_validate({**row, "metadata": json.loads(row["metadata"])})

    async def content(self, scope: RunScope, artifact_id: str) -> tuple[ArtifactMetadata, bytes]:
        """The artifact and all its bytes (for a Box mount; ``not_found`` as metadata)."""
        found = await self.metadata(scope, artifact_id)
        (content,) = await self.db.one(
            "SELECT content FROM artifact_blob WHERE sha256 = ?", (found.sha256,)
        )
        return found, bytes(content)

    async def read(
        self, scope: RunScope, artifact_id: str, offset: int, length: int
    ) -> ArtifactChunk:
        """``length`` bytes from ``offset`` (at most :data:`MAX_RANGE_READ_BYTES`)."""
        if length > MAX_RANGE_READ_BYTES:
            raise MessageTooLargeError(
                f"a range read returns at most {MAX_RANGE_READ_BYTES} bytes, not {length}",
                details={"limit": MAX_RANGE_READ_BYTES, "actual": length},
            )
        found = await self.metadata(scope, artifact_id)
        if offset > found.size_bytes:
            raise _invalid(
                f"offset {offset} is past the end ({found.size_bytes} bytes)", offset=offset
            )
        (piece,) = await self.db.one(
            "SELECT substr(content, ?, ?) FROM artifact_blob WHERE sha256 = ?",
            (offset + 1, length, found.sha256),
        )
        piece = bytes(piece)
        return ArtifactChunk(
            artifact_id=artifact_id,
            offset=offset,
            content_base64=base64.b64encode(piece).decode(),
            eof=offset + len(piece) >= found.size_bytes,
        )

    async def purge(self, now: float | None = None) -> int:
        """Drop artifacts expired by ``now`` (default: the store's clock) and the bytes
        no artifact names any more; the number of artifacts dropped."""
        now = self.clock() if now is None else now

        def drop(conn: sqlite3.Connection) -> int:
            gone = conn.execute("DELETE FROM artifact WHERE expires_at <= ?", (now,)).rowcount
            conn.execute(
                "DELETE FROM artifact_blob WHERE sha256 NOT IN (SELECT sha256 FROM artifact)"
            )
            return gone

        gone = await self.db.run(drop)
        await self.uploads.purge(now)  # uploads never committed
        return gone
