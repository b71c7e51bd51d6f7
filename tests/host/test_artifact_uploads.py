"""Artifact uploads in the host library (issue 23): owned by their run, appended in
order, bounded, dropped when committed or when they go stale. The runner's side (a
multi-MiB artifact through a real runtime) is tests/api/test_artifact_upload.py."""

from __future__ import annotations

import base64
import hashlib

import pytest

from langbot_plugin.host.artifact_uploads import MAX_OPEN_UPLOADS, UPLOAD_TTL
from langbot_plugin.host.artifacts import ArtifactStore
from langbot_plugin.host.grants import RunScope
from langbot_plugin.host.sqlite import HostDatabase
from langbot_plugin.protocol.host_api.artifacts import MAX_UPLOAD_PIECE_BYTES
from langbot_plugin.rpc.errors import (
    InvalidParamsError,
    MessageTooLargeError,
    NotFoundError,
    TooManyRequestsError,
)
from tests.host.clock import FakeClock

pytestmark = pytest.mark.anyio

HERE = RunScope(workspace_id="w", bot_id="b", conversation_id="c1")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _commit(upload_id: str, **extra: object) -> dict[str, object]:
    return {"artifact_type": "file", "upload_id": upload_id, **extra}


async def test_pieces_in_order_commit_into_one_artifact() -> None:
    store = ArtifactStore(HostDatabase(), clock=FakeClock())
    upload = await store.uploads.begin("run-1")
    first = await store.uploads.append("run-1", upload.upload_id, 0, _b64(b"hello "))
    with pytest.raises(InvalidParamsError) as gap:
        await store.uploads.append("run-1", upload.upload_id, 3, _b64(b"x"))
    assert gap.value.details["size_bytes"] == first.size_bytes == 6
    await store.uploads.append("run-1", upload.upload_id, 6, _b64(b"world"))
    # another run can neither append to it nor commit it
    with pytest.raises(NotFoundError):
        await store.uploads.append("run-2", upload.upload_id, 11, _b64(b"!"))
    with pytest.raises(NotFoundError):
        await store.create(HERE, "run-2", _commit(upload.upload_id))
    digest = hashlib.sha256(b"hello world").hexdigest()
    with pytest.raises(InvalidParamsError):  # a wrong digest commits nothing
        await store.create(HERE, "run-1", _commit(upload.upload_id, sha256="0" * 64))
    kept = await store.create(HERE, "run-1", _commit(upload.upload_id, sha256=digest, name="h"))
    assert (kept.size_bytes, kept.sha256) == (11, digest)
    chunk = await store.read(HERE, kept.artifact_id, 6, 5)
    assert base64.b64decode(chunk.content_base64) == b"world"
    with pytest.raises(NotFoundError):  # committed: the upload is gone
        await store.uploads.content("run-1", upload.upload_id)


async def test_uploads_are_bounded() -> None:
    store = ArtifactStore(HostDatabase(), clock=FakeClock())
    store.uploads.max_bytes = 10
    upload = await store.uploads.begin("run-1")
    with pytest.raises(MessageTooLargeError):
        await store.uploads.append("run-1", upload.upload_id, 0, _b64(b"x" * 11))
    big = _b64(b"x" * (MAX_UPLOAD_PIECE_BYTES + 1))
    with pytest.raises(MessageTooLargeError):  # one piece fits one call
        await store.uploads.append("run-1", upload.upload_id, 0, big)
    with pytest.raises(InvalidParamsError):
        await store.uploads.append("run-1", upload.upload_id, 0, "not base64!")
    for _ in range(MAX_OPEN_UPLOADS - 1):
        await store.uploads.begin("run-1")
    with pytest.raises(TooManyRequestsError):
        await store.uploads.begin("run-1")
    await store.uploads.begin("run-2")  # per run


async def test_an_upload_never_committed_is_dropped_by_the_sweep() -> None:
    clock = FakeClock()
    store = ArtifactStore(HostDatabase(), clock=clock)
    upload = await store.uploads.begin("run-1")
    await store.uploads.append("run-1", upload.upload_id, 0, _b64(b"abc"))
    await store.purge()
    assert await store.uploads.content("run-1", upload.upload_id) == b"abc"
    clock.advance(UPLOAD_TTL + 1)
    await store.purge()
    with pytest.raises(NotFoundError):
        await store.uploads.content("run-1", upload.upload_id)
