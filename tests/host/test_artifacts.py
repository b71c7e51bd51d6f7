"""The host library's artifact store (issue 23, seed 003's Protocol v1): kept in the
host's SQLite file (a restart keeps them), bounded, expiring, scoped to the
conversation, MIME-checked, content-addressed. The runner's side (``artifact.created``
then ``api.artifacts`` in a real runtime) is tests/api/test_protocol_v1_run_api.py."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from langbot_plugin.host.artifacts import MAX_ARTIFACTS_PER_RUN, MAX_INLINE_BYTES, ArtifactStore
from langbot_plugin.host.grants import RunScope
from langbot_plugin.host.sqlite import HostDatabase
from langbot_plugin.protocol.host_api.artifacts import MAX_RANGE_READ_BYTES
from langbot_plugin.rpc.errors import (
    ConflictError,
    InvalidParamsError,
    MessageTooLargeError,
    NotFoundError,
)
from tests.host.clock import FakeClock

pytestmark = pytest.mark.anyio

HERE = RunScope(workspace_id="w", bot_id="b", conversation_id="c1")
ELSEWHERE = RunScope(workspace_id="w", bot_id="b", conversation_id="c2")


def _data(content: bytes, **extra: Any) -> dict[str, Any]:
    return {
        "artifact_type": "file",
        "mime_type": "text/plain",
        "content_base64": base64.b64encode(content).decode(),
        **extra,
    }


async def test_a_restart_keeps_an_artifact_until_it_expires(tmp_path: Path) -> None:
    clock = FakeClock()
    db = HostDatabase(tmp_path / "host.db")
    kept = await ArtifactStore(db, clock=clock).create(
        HERE, "run-1", _data(b"hello world", artifact_id="a1", ttl_seconds=60)
    )
    db.close()
    again = ArtifactStore(HostDatabase(tmp_path / "host.db"), clock=clock)
    found = await again.metadata(HERE, "a1")
    assert (found.size_bytes, found.sha256, found.run_id) == (11, kept.sha256, "run-1")
    chunk = await again.read(HERE, "a1", 6, 100)
    assert (base64.b64decode(chunk.content_base64), chunk.eof) == (b"world", True)
    clock.advance(61)
    with pytest.raises(NotFoundError):
        await again.metadata(HERE, "a1")
    assert await again.purge() == 1


async def test_another_conversation_cannot_see_it() -> None:
    store = ArtifactStore(HostDatabase(), clock=FakeClock())
    await store.create(HERE, "run-1", _data(b"secret", artifact_id="a1"))
    with pytest.raises(NotFoundError) as caught:
        await store.read(ELSEWHERE, "a1", 0, 10)
    assert caught.value.details == {"artifact_id": "a1"}  # as for an id that never existed
    # the same id is free in the other conversation; not twice in one
    await store.create(ELSEWHERE, "run-2", _data(b"other", artifact_id="a1"))
    with pytest.raises(ConflictError):
        await store.create(HERE, "run-3", _data(b"again", artifact_id="a1"))


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (_data(b"x" * (MAX_INLINE_BYTES + 1)), MessageTooLargeError),
        (_data(b"x", mime_type="text"), InvalidParamsError),
        (_data(b"x", sha256="0" * 64), InvalidParamsError),
        (_data(b"x", artifact_id="../etc"), InvalidParamsError),
        (_data(b"x", ttl_seconds=0), InvalidParamsError),
        ({"artifact_type": "file", "content_base64": "not base64!"}, InvalidParamsError),
        ({"content_base64": ""}, InvalidParamsError),
    ],
    ids=["too big", "mime", "digest", "id", "ttl", "base64", "type"],
)
async def test_bad_artifacts_are_refused_with_a_code(data: dict[str, Any], error: type) -> None:
    store = ArtifactStore(HostDatabase(), clock=FakeClock())
    with pytest.raises(error):
        await store.create(HERE, "run-1", data)


async def test_bounds_per_run_and_per_read() -> None:
    store = ArtifactStore(HostDatabase(), clock=FakeClock())
    for n in range(MAX_ARTIFACTS_PER_RUN):
        await store.create(HERE, "run-1", _data(b"same bytes", artifact_id=f"a{n}"))
    with pytest.raises(InvalidParamsError):
        await store.create(HERE, "run-1", _data(b"one more"))
    with pytest.raises(MessageTooLargeError):
        await store.read(HERE, "a0", 0, MAX_RANGE_READ_BYTES + 1)
    with pytest.raises(InvalidParamsError):
        await store.read(HERE, "a0", 11, 1)  # past the end
    blobs = await store.db.run(lambda c: c.execute("SELECT COUNT(*) FROM artifact_blob").fetchone())
    assert tuple(blobs) == (1,)  # the same content is kept once
