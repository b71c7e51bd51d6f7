"""Package verification and safe unpacking: hostile archives leave nothing behind."""

from __future__ import annotations

import hashlib
import io
import stat
import zipfile
from pathlib import Path

import pytest

from langbot_plugin.runtime.artifacts import ArtifactError, ArtifactStore, UnpackLimits

MANIFEST = b"apiVersion: v1\nkind: Plugin\nmetadata: {author: a, name: b}\nspec: {}\n"


def package(entries: dict[str, bytes], *, links: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return buffer.getvalue()


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir()) if root.exists() else []


def test_good_package_is_unpacked_once(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "artifacts")
    content = package({"manifest.yaml": MANIFEST, "main.py": b"x = 1\n", "pkg/mod.py": b""})
    digest, folder = store.put(content, hashlib.sha256(content).hexdigest())
    assert (folder / "pkg" / "mod.py").is_file()
    marker = folder / "main.py"
    marker.write_text("changed")  # a second put must not unpack again
    assert store.put(content) == (digest, folder)
    assert marker.read_text() == "changed"


def test_digest_mismatch_is_refused(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "artifacts")
    content = package({"manifest.yaml": MANIFEST})
    with pytest.raises(ArtifactError, match="digest"):
        store.put(content, "0" * 64)
    assert leftovers(tmp_path / "artifacts") == []


@pytest.mark.parametrize(
    ("entries", "links", "reason"),
    [
        ({"manifest.yaml": MANIFEST, "../escape.py": b"boom"}, None, "leaves the package"),
        ({"manifest.yaml": MANIFEST, "/etc/evil": b"boom"}, None, "absolute"),
        ({"manifest.yaml": MANIFEST, "a\\..\\..\\x": b"boom"}, None, "backslash"),
        ({"manifest.yaml": MANIFEST}, {"link": "/etc/passwd"}, "links"),
        ({"main.py": b""}, None, "no manifest.yaml"),
    ],
)
def test_hostile_packages_leave_nothing(
    tmp_path: Path, entries: dict[str, bytes], links: dict[str, str] | None, reason: str
) -> None:
    store = ArtifactStore(tmp_path / "artifacts")
    with pytest.raises(ArtifactError, match=reason):
        store.put(package(entries, links=links))
    assert leftovers(tmp_path / "artifacts") == []
    assert not (tmp_path / "escape.py").exists()


def test_zip_bomb_is_stopped_by_ratio_and_size(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "artifacts")
    bomb = package({"manifest.yaml": MANIFEST, "zeros.bin": b"\0" * (20 * 1024 * 1024)})
    assert len(bomb) < 100_000
    with pytest.raises(ArtifactError, match="ratio"):
        store.put(bomb)
    tight = ArtifactStore(
        tmp_path / "tight", UnpackLimits(max_ratio=10_000, max_total_bytes=1024 * 1024)
    )
    with pytest.raises(ArtifactError, match="too large"):
        tight.put(bomb)
    assert leftovers(tmp_path / "artifacts") == []
    assert leftovers(tmp_path / "tight") == []


def test_too_many_entries_and_duplicates(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "a", UnpackLimits(max_entries=3))
    with pytest.raises(ArtifactError, match="too many entries"):
        store.put(package({"manifest.yaml": MANIFEST, **{f"f{i}": b"" for i in range(5)}}))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("manifest.yaml", MANIFEST)
        with pytest.warns(UserWarning, match="Duplicate name"):
            archive.writestr("manifest.yaml", MANIFEST)
    with pytest.raises(ArtifactError, match="duplicate"):
        ArtifactStore(tmp_path / "b").put(buffer.getvalue())


def test_not_a_zip(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match="not a zip"):
        ArtifactStore(tmp_path / "a").put(b"definitely not a zip")
