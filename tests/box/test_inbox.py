"""The Box's import library on a plain directory: what it refuses before writing."""

from __future__ import annotations

from pathlib import Path

import pytest

from box_runtime.errors import BoxQuotaExceededError, BoxValidationError
from box_runtime.export import SandboxFiles
from box_runtime.inbox import check_import, write_files


def files_at(tmp_path: Path) -> SandboxFiles:
    (tmp_path / "ws").mkdir()
    return SandboxFiles((("/workspace", str(tmp_path / "ws")),), identity=None)


def test_files_land_in_a_new_directory_below_the_inbox(tmp_path: Path) -> None:
    paths = write_files(files_at(tmp_path), "/workspace/inbox/r-a", [("a.txt", b"A"), ("b", b"")])
    assert paths == ["/workspace/inbox/r-a/a.txt", "/workspace/inbox/r-a/b"]
    assert (tmp_path / "ws/inbox/r-a/a.txt").read_bytes() == b"A"


@pytest.mark.parametrize(
    ("directory", "names"),
    [
        ("/workspace/outbox/x", ["a"]),
        ("/workspace/inbox", ["a"]),
        ("/workspace/inbox/../x", ["a"]),
        ("/workspace/inbox/x", ["../a"]),
        ("/workspace/inbox/x", ["."]),
        ("/workspace/inbox/x", ["a", "a"]),
        ("/workspace/inbox/x", ["a\x00b"]),
        ("/workspace/inbox/x", ["é" * 200]),
        ("/workspace/inbox/x", []),
    ],
)
def test_bad_requests_are_refused(directory: str, names: list[str]) -> None:
    with pytest.raises(BoxValidationError):
        check_import(directory, [(name, 1) for name in names])


def test_limits_are_the_exports(tmp_path: Path) -> None:
    with pytest.raises(BoxQuotaExceededError) as too_many:
        check_import("/workspace/inbox/x", [(f"{i}", 1) for i in range(21)])
    assert too_many.value.details["quota"] == "import_call_files"
    with pytest.raises(BoxQuotaExceededError) as too_big:
        check_import("/workspace/inbox/x", [("a", 10 * 1024 * 1024 + 1)])
    assert too_big.value.details["quota"] == "import_file_bytes"


def test_an_existing_entry_is_never_overwritten(tmp_path: Path) -> None:
    files = files_at(tmp_path)
    write_files(files, "/workspace/inbox/x", [("a", b"first")])
    (tmp_path / "ws/inbox/x/link").symlink_to(tmp_path / "outside")
    for name in ("a", "link"):
        with pytest.raises(BoxValidationError, match="exists already"):
            write_files(files, "/workspace/inbox/x", [(name, b"second")])
    assert (tmp_path / "ws/inbox/x/a").read_bytes() == b"first"
    assert not (tmp_path / "outside").exists()
