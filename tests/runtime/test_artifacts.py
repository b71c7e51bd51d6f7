"""Package verification and safe unpacking: hostile archives leave nothing behind."""

from __future__ import annotations

import hashlib
import io
import stat
import struct
import zipfile
import zlib
from pathlib import Path

import pytest

from langbot_plugin.runtime.artifacts import ArtifactError, ArtifactStore, UnpackLimits, safe_unpack
from tests.support.zips import CENTRAL, patch_central

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


# ---------------------------------------------------------------- hostile headers and data


def deflated_copies(count: int, size: int) -> bytes:
    """A zip of ``count`` entries of ``size`` zero bytes, compressed once and repeated."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = packer.compress(b"\0" * size) + packer.flush()
    crc = zlib.crc32(b"\0" * size)
    local, central = bytearray(), bytearray()
    entries = [("manifest.yaml", MANIFEST, zlib.crc32(MANIFEST), 0)] + [
        (f"zeros/{i}.bin", body, crc, size) for i in range(count)
    ]
    for name, data, checksum, plain in entries:
        method, usize = (8, plain) if plain else (0, len(data))
        encoded = name.encode()
        header = (20, 0, method, 0, 0x21, checksum, len(data), usize, len(encoded))
        central += struct.pack(
            "<4s6H3I5H2I", CENTRAL, 20, *header, 0, 0, 0, 0, 0o644 << 16, len(local)
        )
        central += encoded
        local += struct.pack("<4s5H3I2H", b"PK\x03\x04", *header, 0) + encoded + data
    end = struct.pack(
        "<4s4H2IH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(central), len(local), 0
    )
    return bytes(local + central + end)


def written_files(root: Path) -> dict[str, int]:
    return {
        p.relative_to(root).as_posix(): p.stat().st_size for p in root.rglob("*") if p.is_file()
    }


def test_many_small_entries_are_refused_from_the_directory_before_anything_is_written(
    tmp_path: Path,
) -> None:
    # 257 entries of 1 MiB: each is under the ratio floor, together they pass 256 MiB.
    bomb = deflated_copies(257, 1024 * 1024)
    assert len(bomb) < 1024 * 1024
    assert zipfile.ZipFile(io.BytesIO(bomb)).testzip() is None  # a well-formed zip
    target = tmp_path / "target"
    target.mkdir()
    with pytest.raises(ArtifactError, match="too large when unpacked") as info:
        safe_unpack(bomb, target)
    assert info.value.code == "artifact_invalid"
    assert info.value.details["declared"] > UnpackLimits().max_total_bytes
    assert written_files(target) == {}
    assert list(target.iterdir()) == []


def test_an_encrypted_entry_is_refused(tmp_path: Path) -> None:
    content = package({"manifest.yaml": MANIFEST, "secret.py": b"x = 1\n"})
    encrypted = patch_central(content, "secret.py", flag_bits=0x1)
    with pytest.raises(ArtifactError, match="encrypted entry") as info:
        ArtifactStore(tmp_path / "a").put(encrypted)
    assert info.value.details["entry"] == "secret.py"
    assert leftovers(tmp_path / "a") == []


def test_a_corrupt_entry_is_artifact_invalid(tmp_path: Path) -> None:
    content = package({"manifest.yaml": MANIFEST, "main.py": b"print('hello')\n" * 100})
    bad_crc = patch_central(content, "main.py", crc=0x12345678)
    with pytest.raises(ArtifactError, match="corrupt entry") as info:
        ArtifactStore(tmp_path / "a").put(bad_crc)
    assert "CRC" in info.value.message
    assert info.value.code == "artifact_invalid"
    # damaged compressed bytes: the inflater fails instead of the checksum
    start = content.index(b"main.py") + len("main.py")
    damaged = content[:start] + b"\xff" * 8 + content[start + 8 :]
    with pytest.raises(ArtifactError, match="corrupt entry"):
        ArtifactStore(tmp_path / "b").put(damaged)
    assert leftovers(tmp_path / "a") == leftovers(tmp_path / "b") == []


def test_a_header_that_understates_an_entry_never_lets_more_through(tmp_path: Path) -> None:
    big = b"0123456789abcdef" * (256 * 1024)  # 4 MiB
    content = package({"manifest.yaml": MANIFEST, "big.bin": big})
    limits = UnpackLimits(max_entry_bytes=1024 * 1024, max_total_bytes=1024 * 1024)
    with pytest.raises(ArtifactError, match="too large"):
        safe_unpack(content, tmp_path / "honest", limits)  # the honest header is refused
    lying = patch_central(content, "big.bin", file_size=1000)
    target = tmp_path / "lying"
    target.mkdir()
    with pytest.raises(ArtifactError, match="corrupt entry") as info:
        safe_unpack(lying, target, limits)
    assert info.value.details["entry"] == "big.bin"
    assert written_files(target).get("big.bin", 0) <= 1000  # never more than declared


def test_a_header_that_overstates_an_entry_is_refused(tmp_path: Path) -> None:
    content = package({"manifest.yaml": MANIFEST, "main.py": b"x = 1\n" * 1000})
    lying = patch_central(content, "main.py", file_size=100_000)
    with pytest.raises(ArtifactError, match="shorter than its header") as info:
        ArtifactStore(tmp_path / "a").put(lying)
    assert info.value.details["declared"] == 100_000
    assert leftovers(tmp_path / "a") == []


@pytest.mark.parametrize(
    ("entries", "reason"),
    [
        (
            {"manifest.yaml": MANIFEST, "pkg": b"a file", "pkg/mod.py": b""},
            "both a file and a folder",
        ),
        (
            {"manifest.yaml": MANIFEST, "pkg/mod.py": b"", "pkg": b"a file"},
            "both a file and a folder",
        ),
        ({"manifest.yaml": MANIFEST, "./": b""}, "empty path"),
    ],
)
def test_entries_that_cannot_all_be_written_are_refused_first(
    tmp_path: Path, entries: dict[str, bytes], reason: str
) -> None:
    target = tmp_path / "target"
    target.mkdir()
    with pytest.raises(ArtifactError, match=reason):
        safe_unpack(package(entries), target)
    assert list(target.iterdir()) == []
