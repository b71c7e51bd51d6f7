"""Content-addressed mounts: the refusals, the store's bounds, the wire (fake backend).

What every backend shows a command is the conformance suite's
(``test_content_addressed_mounts_*``); here are the checks before anything is shown.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from box_runtime import artifacts
from box_runtime.client import BoxClient
from box_runtime.errors import (
    BoxArtifactDigestError,
    BoxArtifactRefusedError,
    BoxMountDeniedError,
    BoxSessionConflictError,
    BoxValidationError,
)
from box_runtime.models import BoxSpec
from box_runtime.runtime import BoxRuntime
from box_runtime.sessions import Tenant
from box_runtime.tree_manifest import manifest_digest

from .helpers import CONTEXT, fake_runtime, served_box
from .revisions import Revision, publish_revision

pytestmark = pytest.mark.anyio
T = Tenant("inst-1", "ws-1", 1)


def spec(cmd: str, *mounts: dict[str, str], session_id: str = "s1") -> BoxSpec:
    return BoxSpec.model_validate(
        {"session_id": session_id, "cmd": cmd, "extra_mounts": list(mounts)}
    )


def skills(tmp_path: Path) -> Path:
    return tmp_path / "mounts" / "skills"


async def refused(
    runtime: BoxRuntime, revision: Revision, **override: str
) -> BoxArtifactRefusedError:
    with pytest.raises(BoxArtifactRefusedError) as caught:
        await runtime.exec(spec(f"cat {revision.path}/SKILL.md", revision.mount(**override)), T)
    return caught.value


async def test_a_manifest_that_is_not_a_tree_manifest_is_refused(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path)
    revision = publish_revision(skills(tmp_path), {"SKILL.md": "x\n"})
    manifest = json.loads(revision.manifest.read_text())
    for broken in (
        {**manifest, "extra": 1},
        {**manifest, "total_bytes": manifest["total_bytes"] + 1},
        {**manifest, "files": [{**manifest["files"][0], "path": "../SKILL.md"}]},
    ):
        # Named after its own digest, so only the shape can refuse it.
        revision.manifest.write_text(json.dumps(broken))
        digest = manifest_digest(broken)
        forged = {"content_digest": digest, "mount_path": f"/opt/langbot-artifacts/{digest[7:]}"}
        error = await refused(runtime, revision, **forged)
        assert error.details["reason"] == "manifest_invalid"
        assert not isinstance(error, BoxArtifactDigestError)


async def test_a_link_in_the_package_is_refused(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path)
    secret = tmp_path / "mounts" / "secret.txt"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text("x\n")  # the same bytes as the published file
    revision = publish_revision(skills(tmp_path), {"SKILL.md": "x\n"})
    (revision.package / "SKILL.md").unlink()
    (revision.package / "SKILL.md").symlink_to(secret)
    assert (await refused(runtime, revision)).details["reason"] == "content_changed"


async def test_a_package_or_manifest_outside_the_allowed_roots_is_refused(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path)
    outside = publish_revision(tmp_path / "elsewhere", {"SKILL.md": "x\n"})
    inside = publish_revision(skills(tmp_path), {"SKILL.md": "x\n"})
    for mount in (
        outside.mount(),
        inside.mount(manifest_path=str(outside.manifest)),
    ):
        with pytest.raises(BoxMountDeniedError):
            await runtime.exec(spec("true", mount), T)


async def test_a_forged_digest_is_refused_over_the_wire_with_its_code(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path)
    good = publish_revision(skills(tmp_path), {"SKILL.md": "good\n"})
    other = publish_revision(skills(tmp_path), {"SKILL.md": "other\n"})
    async with (
        runtime.running(),
        served_box(runtime) as box,
        BoxClient.connect(box.url, instance_id="inst-1", context=CONTEXT) as client,
    ):
        forged = good.mount(manifest_path=str(other.manifest))
        with pytest.raises(BoxArtifactDigestError) as caught:
            await client.exec(session_id="s1", cmd="true", extra_mounts=[forged])
        assert caught.value.code == "box_artifact_digest_mismatch"
        # Reference peers parse the message's class name.
        assert isinstance(caught.value, BoxValidationError)
        assert caught.value.wire_type == "BoxValidationError"
        result = await client.exec(
            session_id="s1", cmd=f"cat {good.path}/SKILL.md", extra_mounts=[good.mount()]
        )
        assert result.stdout == "good\n"


async def test_a_session_drops_unused_copies_to_stay_within_its_bounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(artifacts, "MAX_ARTIFACTS", 2)
    runtime, _ = fake_runtime(tmp_path)
    published = [publish_revision(skills(tmp_path), {"SKILL.md": f"r{n}\n"}) for n in range(3)]
    for revision in published:
        result = await runtime.exec(spec(f"cat {revision.path}/SKILL.md", revision.mount()), T)
        assert result.stdout == f"r{published.index(revision)}\n"
    (session,) = runtime.sessions(T)
    kept = sorted(os.listdir(session.artifacts.root))
    assert kept == sorted(r.hex for r in published[1:])
    # Two in use at once still fit; three do not.
    both = [r.mount() for r in published[:2]]
    assert (await runtime.exec(spec("true", *both), T)).exit_code == 0
    with pytest.raises(BoxValidationError) as full:
        await runtime.exec(spec("true", *(r.mount() for r in published)), T)
    assert full.value.details["quota"] == "artifact_count"


async def test_the_session_compatibility_check_still_holds_for_other_mounts(
    tmp_path: Path,
) -> None:
    runtime, _ = fake_runtime(tmp_path)
    plain = tmp_path / "mounts" / "data"
    plain.mkdir(parents=True)
    mount = {"host_path": str(plain), "mount_path": "/data", "mode": "ro"}
    await runtime.exec(spec("true", mount), T)
    with pytest.raises(BoxSessionConflictError, match="extra_mounts"):
        await runtime.exec(spec("true"), T)
