"""The skill store: front matter, immutable revisions, namespaces, safe archives, actions."""

from __future__ import annotations

import io
import os
import stat
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from box_runtime.client import BoxClient
from box_runtime.errors import BoxValidationError
from box_runtime.models import BoxSpec
from box_runtime.scope import workspace_namespace
from box_runtime.skill_archive import SkillArchiveError
from box_runtime.skill_package import build_skill_md, parse_frontmatter
from box_runtime.skills import (
    SkillError,
    SkillNotFoundError,
    SkillRevisionConflictError,
    SkillStore,
)

from .helpers import CONTEXT, fake_runtime, served_box

pytestmark = pytest.mark.anyio

SKILL_MD = "---\nname: {name}\ndescription: {description}\nlicense: MIT\n---\n\n# {name}\nDo it.\n"


def skill_md(name: str, description: str = "does things") -> str:
    return SKILL_MD.format(name=name, description=description)


def make_zip(entries: Mapping[str, bytes | str], **infos: Any) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = infos.get(name, 0o100644) << 16
            archive.writestr(info, data)
    return buffer.getvalue()


@pytest.fixture
def store(tmp_path: Path) -> SkillStore:
    return SkillStore(tmp_path / "skills").scoped("ws-one")


# --------------------------------------------------------------------------- front matter


def test_front_matter_round_trips_unknown_keys_and_drops_bookkeeping() -> None:
    metadata, instructions = parse_frontmatter(skill_md("pdf-tools"))
    assert metadata == {"name": "pdf-tools", "description": "does things", "license": "MIT"}
    assert instructions == "# pdf-tools\nDo it.\n"
    rebuilt = build_skill_md({**metadata, "revision": "sha256:x", "display_name": ""}, instructions)
    assert parse_frontmatter(rebuilt) == (metadata, instructions)
    assert parse_frontmatter("plain text\n") == ({}, "plain text\n")
    assert build_skill_md({}, "only text") == "only text"
    with pytest.raises(SkillError, match="YAML"):
        parse_frontmatter("---\nname: [unclosed\n---\nx")


# --------------------------------------------------------------------------- the store


def test_create_update_and_delete_publish_immutable_revisions(store: SkillStore) -> None:
    created = store.create_skill(
        {"name": "notes", "description": "takes notes", "instructions": "Write."}
    )
    assert created["revision"].startswith("sha256:")
    package = Path(created["package_root"])
    assert package.parent.name == created["revision"].removeprefix("sha256:")
    assert (package / "SKILL.md").read_text().startswith("---\nname: notes\n")
    assert not os.access(package / "SKILL.md", os.W_OK) or os.geteuid() == 0
    assert stat.S_IMODE((package / "SKILL.md").stat().st_mode) == 0o444
    assert Path(created["manifest_path"]).is_file()
    assert [s["name"] for s in store.list_skills()] == ["notes"]
    with pytest.raises(SkillError, match="already exists"):
        store.create_skill({"name": "notes"})
    with pytest.raises(SkillRevisionConflictError, match="needs base_revision"):
        store.update_skill("notes", {"description": "x"}, base_revision=None)
    updated = store.update_skill(
        "notes", {"description": "takes better notes"}, base_revision=created["revision"]
    )
    assert updated["description"] == "takes better notes"
    assert updated["revision"] != created["revision"]
    assert updated["created_at"] == created["created_at"]
    with pytest.raises(SkillRevisionConflictError, match="changed since"):
        store.update_skill("notes", {"description": "y"}, base_revision=created["revision"])
    # The old revision stays readable for runs that mounted it.
    pinned = store.get_skill("notes", revision=created["revision"])
    assert pinned is not None
    assert pinned["description"] == "takes notes"
    assert store.delete_skill("notes") == {"deleted": "notes"}
    assert store.get_skill("notes") is None
    assert Path(updated["package_root"]).is_dir()
    with pytest.raises(SkillNotFoundError):
        store.delete_skill("notes")
    with pytest.raises(SkillError, match="invalid skill name"):
        store.create_skill({"name": "../evil"})


def test_files_of_a_skill_are_listed_read_and_written_inside_it(store: SkillStore) -> None:
    skill = store.create_skill({"name": "files", "instructions": "x"})
    written = store.write_skill_file(
        "files", "scripts/run.sh", "echo hi\n", base_revision=skill["revision"]
    )
    assert written["bytes_written"] == 8
    listing = store.list_skill_files("files")
    assert [e["name"] for e in listing["entries"]] == ["SKILL.md", "scripts"]
    assert store.list_skill_files("files", "scripts")["entries"][0]["path"] == "scripts/run.sh"
    assert store.read_skill_file("files", "scripts/run.sh")["content"] == "echo hi\n"
    one = store.list_skill_files("files", ".", max_entries=1)
    assert one["truncated"] is True
    for bad in ("../x", "/etc/passwd", "scripts/../../x"):
        with pytest.raises(SkillError, match="within the skill package"):
            store.read_skill_file("files", bad)
        with pytest.raises(SkillError, match="within the skill package"):
            store.write_skill_file("files", bad, "x", base_revision=written["revision"])
    resources = store.list_skill_resources("files", expected_revision=written["revision"])
    assert resources["revision"] == written["revision"]


def test_workspaces_do_not_see_each_others_skills(tmp_path: Path) -> None:
    root = SkillStore(tmp_path / "skills")
    root.scoped("ws-one").create_skill({"name": "mine"})
    assert root.scoped("ws-two").list_skills() == []
    assert root.scoped("ws-two").get_skill("mine") is None
    with pytest.raises(SkillError):
        root.scoped("../ws-one")


def test_packages_come_only_from_inside_the_workspace_and_hold_no_links(
    store: SkillStore, tmp_path: Path
) -> None:
    draft = Path(store.root, "drafts", "helper")
    draft.mkdir(parents=True)
    (draft / "SKILL.md").write_text(skill_md("helper"))
    (draft / "tool.py").write_text("print(1)\n")
    created = store.create_skill({"name": "helper", "package_root": str(draft)})
    assert (Path(created["package_root"]) / "tool.py").read_text() == "print(1)\n"
    assert created["description"] == "does things"
    assert store.scan_directory(str(draft.parent))["name"] == "helper"
    outside = tmp_path / "outside"
    outside.mkdir()
    with pytest.raises(SkillError, match="within the workspace"):
        store.create_skill({"name": "stolen", "package_root": str(outside)})
    (draft / "leak").symlink_to("/etc/passwd")
    with pytest.raises(SkillError, match="symbolic link"):
        store.create_skill({"name": "leaky", "package_root": str(draft)})


def test_the_reference_layout_is_published_on_first_use(tmp_path: Path) -> None:
    legacy = tmp_path / "skills" / "tenants" / "ws-one" / "old-skill"
    legacy.mkdir(parents=True)
    (legacy / "SKILL.md").write_text(skill_md("old-skill"))
    store = SkillStore(tmp_path / "skills").scoped("ws-one")
    (skill,) = store.list_skills()
    assert skill["name"] == "old-skill"
    assert skill["revision"].startswith("sha256:")


# --------------------------------------------------------------------------- archives


def test_an_archive_is_previewed_and_installed_with_its_subdirectory_and_suffix(
    store: SkillStore,
) -> None:
    data = make_zip(
        {
            "bundle/alpha/SKILL.md": skill_md("alpha"),
            "bundle/alpha/run.sh": "echo a\n",
            "bundle/beta/SKILL.md": skill_md("beta"),
        },
        **{"bundle/alpha/run.sh": 0o100755},
    )
    previews = store.preview_zip_upload(file_bytes=data, filename="My Pack.zip")
    assert [(p["name"], p["source_path"]) for p in previews] == [
        ("alpha", "alpha"),
        ("beta", "beta"),
    ]
    assert previews[0]["package_root"].endswith("My-Pack-alpha-upload")
    assert store.list_skills() == []  # a preview keeps nothing
    with pytest.raises(SkillError, match="choose source_paths"):
        store.install_zip_upload(file_bytes=data, filename="pack.zip")
    (installed,) = store.install_zip_upload(
        file_bytes=data, filename="pack.zip", source_paths=["alpha"]
    )
    run = Path(installed["package_root"]) / "run.sh"
    assert run.read_text() == "echo a\n"
    assert run.stat().st_mode & 0o111
    only_beta = store.preview_zip_upload(file_bytes=data, filename="p.zip", source_subdir="beta")
    assert [p["name"] for p in only_beta] == ["beta"]
    with pytest.raises(SkillError, match="within the skill package"):
        store.preview_zip_upload(file_bytes=data, filename="p.zip", source_subdir="../..")
    # All or none: beta would install, alpha exists already.
    with pytest.raises(SkillError, match="alpha already exists"):
        store.install_zip_upload(file_bytes=data, filename="p.zip", source_paths=["beta", "alpha"])
    assert [s["name"] for s in store.list_skills()] == ["alpha"]


def _nothing_left(store: SkillStore) -> None:
    staging = Path(store.root, ".langbot-skill-store", "staging")
    assert not staging.exists() or list(staging.iterdir()) == []
    assert store.list_skills() == []


def _symlink_zip() -> bytes:
    return make_zip({"s/SKILL.md": skill_md("s"), "s/link": "/etc/passwd"}, **{"s/link": 0o120777})


def _ratio_fifty(size: int) -> bytes:
    """Data that deflates about 50:1 and quickly: 1 KiB of noise in every 50 KiB."""
    unit = 50 * 1024
    return b"".join(os.urandom(1024) + bytes(unit - 1024) for _ in range(size // unit + 1))[:size]


@pytest.mark.parametrize(
    ("archive", "message"),
    [
        (lambda: b"", "empty"),
        (lambda: b"not a zip at all", "not a valid zip"),
        (lambda: make_zip({"../evil/SKILL.md": skill_md("evil")}), "unsafe path"),
        (lambda: make_zip({"/etc/SKILL.md": skill_md("evil")}), "unsafe path"),
        (lambda: make_zip({"a\\..\\SKILL.md": skill_md("evil")}), "unsafe path"),
        (lambda: make_zip({"C:/SKILL.md": skill_md("evil")}), "unsafe path"),
        (_symlink_zip, "symbolic link"),
        (lambda: make_zip({"s/fifo": ""}, **{"s/fifo": 0o010644}), "special file"),
        (lambda: make_zip({"s/SKILL.md": "a", "S/skill.md": "b"}), "twice"),
        (lambda: make_zip({f"s/{i}": "x" for i in range(513)}), "513 entries"),
        (lambda: make_zip({"s/zeros": b"\0" * (2 * 1024 * 1024)}), "compression ratio"),
        (lambda: make_zip({"s/big": _ratio_fifty(17 * 1024 * 1024)}), "an entry"),
        (
            lambda: make_zip({f"s/part{i}": _ratio_fifty(14 * 1024 * 1024) for i in range(5)}),
            "expands to more than",
        ),
        (lambda: os.urandom(21 * 1024 * 1024), "the limit is 20971520"),
    ],
)
def test_hostile_archives_are_refused_before_anything_is_written(
    store: SkillStore, archive: Any, message: str
) -> None:
    data = archive()
    for action in (store.preview_zip_upload, store.install_zip_upload):
        with pytest.raises(SkillError, match=message):
            action(file_bytes=data, filename="x.zip")
    _nothing_left(store)


def test_an_encrypted_or_corrupt_entry_is_refused(store: SkillStore) -> None:
    plain = make_zip({"s/SKILL.md": skill_md("s")})
    encrypted = bytearray(plain)
    # Set the "encrypted" flag bit in the central directory record (PK\1\2, offset 8).
    central = encrypted.rindex(b"PK\x01\x02")
    encrypted[central + 8] |= 0x1
    with pytest.raises(SkillArchiveError, match="encrypted"):
        store.install_zip_upload(file_bytes=bytes(encrypted), filename="x.zip")
    corrupt = bytearray(make_zip({"s/SKILL.md": skill_md("s") * 50}))
    corrupt[60] ^= 0xFF  # inside the first entry's compressed data
    with pytest.raises(SkillArchiveError, match="corrupt"):
        store.install_zip_upload(file_bytes=bytes(corrupt), filename="x.zip")
    _nothing_left(store)


# --------------------------------------------------------------------------- the actions


async def test_the_eleven_actions_over_the_wire(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path, local={"host_root": str(tmp_path / "box")})
    async with (
        served_box(runtime) as box,
        BoxClient.connect(box.url, instance_id="inst-1", context=CONTEXT) as client,
    ):
        call = client.session.call

        async def tenant(action: str, data: dict[str, Any]) -> dict[str, Any]:
            return await call(action, data, context=CONTEXT)

        assert await tenant("box_list_skills", {}) == {"skills": []}
        created = (await tenant("box_create_skill", {"skill": {"name": "demo"}}))["skill"]
        assert created["name"] == "demo"
        got = (await tenant("box_get_skill", {"name": "demo"}))["skill"]
        assert got["revision"] == created["revision"]
        assert (await tenant("box_get_skill", {"name": "none"}))["skill"] is None
        updated = await tenant(
            "box_update_skill", {"name": "demo", "skill": {"description": "now described"}}
        )
        assert updated["skill"]["description"] == "now described"
        written = await tenant(
            "box_write_skill_file", {"name": "demo", "path": "a.txt", "content": "hello"}
        )
        assert written["bytes_written"] == 5
        assert (await tenant("box_read_skill_file", {"name": "demo", "path": "a.txt"}))[
            "content"
        ] == "hello"
        files = await tenant("box_list_skill_files", {"name": "demo"})
        assert [e["name"] for e in files["entries"]] == ["SKILL.md", "a.txt"]
        key = await client.session.send_file(make_zip({"z/SKILL.md": skill_md("zipped")}))
        preview = await tenant("box_preview_skill_zip", {"file_key": key, "filename": "z.zip"})
        assert [s["name"] for s in preview["skills"]] == ["zipped"]
        key = await client.session.send_file(make_zip({"z/SKILL.md": skill_md("zipped")}))
        installed = await tenant("box_install_skill_zip", {"file_key": key, "filename": "z.zip"})
        assert [s["name"] for s in installed["skills"]] == ["zipped"]
        namespace = workspace_namespace(CONTEXT["instance_uuid"], CONTEXT["workspace_uuid"])
        draft = anyio.Path(runtime.settings.skills_root, "tenants", namespace, "draft")
        await draft.mkdir()
        await (draft / "SKILL.md").write_text(skill_md("drafted"))
        assert (await tenant("box_scan_skill_directory", {"path": str(draft)}))["name"] == "drafted"
        assert await tenant("box_delete_skill", {"name": "demo"}) == {"deleted": "demo"}
        names = [s["name"] for s in (await tenant("box_list_skills", {}))["skills"]]
        assert names == ["zipped"]
        with pytest.raises(BoxValidationError, match="workspace context"):
            await call("box_list_skills", {})
        other = {**CONTEXT, "workspace_uuid": "ws-2"}
        assert await call("box_list_skills", {}, context=other) == {"skills": []}
        with pytest.raises(BoxValidationError, match="not found"):
            await tenant("box_delete_skill", {"name": "demo"})


async def test_skill_mounts_are_read_only_whatever_the_request_says(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path, local={"host_root": str(tmp_path / "box")})
    store = SkillStore(runtime.settings.skills_root).scoped("ws-x")
    skill = store.create_skill({"name": "ro"})
    async with runtime.running():
        await runtime.create_session(
            BoxSpec.model_validate(
                {
                    "session_id": "s",
                    "extra_mounts": [
                        {
                            "host_path": skill["package_root"],
                            "mount_path": "/workspace/.skills/ro",
                            "mode": "rw",
                        }
                    ],
                }
            ),
            None,
        )
    (_, mount) = fake.started[0].mounts
    assert (mount.sandbox_path, mount.read_only) == ("/workspace/.skills/ro", True)


@pytest.mark.parametrize(
    "entries",
    [
        # The bad entry comes last: a check while extracting would have written the rest.
        {**{f"s/ok{i}": b"fine" for i in range(3)}, "s/../../escape": b"x"},
        {f"s/part{i}": _ratio_fifty(14 * 1024 * 1024) for i in range(5)},
    ],
)
def test_the_central_directory_is_checked_before_a_byte_is_written(
    tmp_path: Path, entries: dict[str, bytes]
) -> None:
    from box_runtime.skill_archive import extract_archive

    target = tmp_path / "extracted"
    with pytest.raises(SkillArchiveError):
        extract_archive(make_zip(entries), str(target))
    assert not target.exists()
