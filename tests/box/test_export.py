"""Explicit file export (seed 004): every refusal, the limits, compare-and-delete.

The library is tested on real directory trees (no engine needed); the served
actions run against the fake backend, real Docker (through ``/proc/<pid>/root`` and
through the engine's archive API) and real nsjail.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import anyio
import pytest

from box_runtime.client import BoxClient, accept_read
from box_runtime.errors import (
    BoxExportRefusedError,
    BoxQuotaExceededError,
    BoxSessionNotFoundError,
    BoxValidationError,
)
from box_runtime.export import (
    ExportLimits,
    Identity,
    RunLedger,
    SandboxFiles,
    charge,
    read_files,
    remove_if_unchanged,
)
from box_runtime.protocol import ReadFileInfo, ReadFilesResult
from tests.support.waiting import PATIENCE

from .helpers import CONTEXT, fake_runtime, served_box

pytestmark = pytest.mark.anyio

MIB = 1024 * 1024


@pytest.fixture
def tree(tmp_path: Path) -> SandboxFiles:
    """A sandbox whose /workspace is tmp_path/ws and /tmp is tmp_path/tmp."""
    (tmp_path / "ws" / "out").mkdir(parents=True)
    (tmp_path / "tmp").mkdir()
    (tmp_path / "ws" / "out" / "a.txt").write_bytes(b"alpha")
    (tmp_path / "ws" / "out" / "b.bin").write_bytes(b"\x00\x01beta")
    (tmp_path / "tmp" / "t.txt").write_bytes(b"temp")
    return SandboxFiles(
        (("/workspace", str(tmp_path / "ws")), ("/tmp", str(tmp_path / "tmp"))), identity=None
    )


def refusal(files: SandboxFiles, paths: list[str]) -> BoxExportRefusedError:
    with pytest.raises(BoxExportRefusedError) as caught:
        read_files(files, paths)
    assert caught.value.details["files_retained"] is True
    assert "all were kept" in caught.value.message
    return caught.value


def test_selected_files_are_read_with_digest_owner_and_mode(tree: SandboxFiles) -> None:
    files = read_files(tree, ["/workspace/out/a.txt", "/tmp/t.txt"])
    assert [f.data for f in files] == [b"alpha", b"temp"]
    assert files[0].sha256 == hashlib.sha256(b"alpha").hexdigest()
    assert files[0].size == 5
    assert files[0].uid == os.getuid()
    assert files[0].mode == stat.S_IMODE(os.stat(tree.roots[0][1] + "/out/a.txt").st_mode)


@pytest.mark.parametrize(
    "paths",
    [[], ["workspace/out/a.txt"], ["/workspace/./out/a.txt"], ["/workspace//out/a.txt"],
     ["/workspace/out/"], ["/workspace/out/../out/a.txt"], ["/"],
     ["/workspace/out/a.txt", "/workspace/out/a.txt"]],
)  # fmt: skip
def test_paths_must_be_distinct_normalized_and_absolute(
    tree: SandboxFiles, paths: list[str]
) -> None:
    with pytest.raises(BoxValidationError):
        read_files(tree, paths)


def test_kernel_trees_and_paths_outside_the_session_are_refused(tree: SandboxFiles) -> None:
    for path in ("/proc/self/environ", "/sys/kernel/notes", "/dev/zero", "/etc/passwd"):
        assert refusal(tree, [path]).details["reason"] == "outside"


def test_missing_directories_and_links_are_refused(tree: SandboxFiles, tmp_path: Path) -> None:
    assert refusal(tree, ["/workspace/out/none.txt"]).details["reason"] == "missing"
    assert refusal(tree, ["/workspace/none/a.txt"]).details["reason"] == "missing"
    assert refusal(tree, ["/workspace/out"]).details["reason"] == "not_regular"
    # A link as the file, and a link on the way, even to files of the sandbox itself.
    (tmp_path / "ws" / "link.txt").symlink_to(tmp_path / "ws" / "out" / "a.txt")
    assert refusal(tree, ["/workspace/link.txt"]).details["reason"] == "symlink"
    (tmp_path / "ws" / "linkdir").symlink_to(tmp_path / "ws" / "out")
    assert refusal(tree, ["/workspace/linkdir/a.txt"]).details["reason"] == "symlink"
    (tmp_path / "ws" / "host").symlink_to("/etc")
    assert refusal(tree, ["/workspace/host/passwd"]).details["reason"] == "symlink"


async def test_a_fifo_never_blocks_the_reader(tree: SandboxFiles, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "ws" / "out" / "pipe")
    with anyio.fail_after(PATIENCE):  # a blocking open would hang here forever
        with pytest.raises(BoxExportRefusedError) as caught:
            await anyio.to_thread.run_sync(read_files, tree, ["/workspace/out/pipe"])
    assert caught.value.details["reason"] == "not_regular"


def test_the_sandbox_users_rights_apply(tree: SandboxFiles, tmp_path: Path) -> None:
    stranger = SandboxFiles(tree.roots, Identity(54321, frozenset({54321})))
    secret = tmp_path / "ws" / "out" / "secret"
    secret.write_bytes(b"root only")
    secret.chmod(0o600)
    assert refusal(stranger, ["/workspace/out/secret"]).details["reason"] == "unreadable"
    (tmp_path / "ws" / "out").chmod(0o700)
    try:
        assert refusal(stranger, ["/workspace/out/a.txt"]).details["reason"] == "unreadable"
    finally:
        (tmp_path / "ws" / "out").chmod(0o755)
    assert read_files(stranger, ["/workspace/out/a.txt"])[0].data == b"alpha"


def test_one_bad_file_refuses_the_whole_batch(tree: SandboxFiles) -> None:
    ledger = RunLedger()
    with pytest.raises(BoxExportRefusedError) as caught:
        charge(ledger, read_files(tree, ["/workspace/out/a.txt", "/workspace/out/missing"]))
    assert caught.value.details["sandbox_paths"] == ["/workspace/out/missing"]
    assert ledger.files == {}


def _quota(files: SandboxFiles, paths: list[str], limits: ExportLimits) -> BoxQuotaExceededError:
    with pytest.raises(BoxQuotaExceededError) as caught:
        read_files(files, paths, limits=limits)
    error = caught.value
    assert error.details["files_retained"] is True
    assert str(error.limit) in error.message
    assert str(error.actual) in error.message
    assert "no file was exported, all were kept" in error.message
    return error


def test_call_and_file_limits_state_threshold_actual_and_paths(
    tree: SandboxFiles, tmp_path: Path
) -> None:
    many = [f"/workspace/f{i}" for i in range(21)]
    error = _quota(tree, many, ExportLimits())
    assert (error.details["quota"], error.limit, error.actual) == ("export_call_files", 20, 21)
    (tmp_path / "ws" / "big").write_bytes(b"x" * (10 * MIB + 1))
    error = _quota(tree, ["/workspace/big"], ExportLimits())
    assert (error.details["quota"], error.limit, error.actual) == (
        "export_file_bytes",
        10 * MIB,
        10 * MIB + 1,
    )
    assert error.details["sandbox_paths"] == ["/workspace/big"]
    for index in range(6):
        (tmp_path / "ws" / f"part{index}").write_bytes(b"y" * (9 * MIB))
    parts = [f"/workspace/part{i}" for i in range(6)]
    error = _quota(tree, parts, ExportLimits())
    assert (error.details["quota"], error.limit, error.actual) == (
        "export_call_bytes",
        50 * MIB,
        54 * MIB,
    )
    assert error.details["sandbox_paths"] == parts


def test_run_limits_count_each_unchanged_file_once(tree: SandboxFiles, tmp_path: Path) -> None:
    ledger = RunLedger()
    limits = ExportLimits(run_files=3, run_bytes=20)
    batch = read_files(tree, ["/workspace/out/a.txt", "/tmp/t.txt"])
    charge(ledger, batch, limits)
    charge(ledger, read_files(tree, ["/workspace/out/a.txt"]), limits)  # unchanged: free
    assert (len(ledger.files), ledger.bytes) == (2, 9)
    (tmp_path / "ws" / "out" / "a.txt").write_bytes(b"alpha, changed")  # a new version
    with pytest.raises(BoxQuotaExceededError) as caught:
        charge(ledger, read_files(tree, ["/workspace/out/a.txt"]), limits)
    assert (caught.value.details["quota"], caught.value.limit, caught.value.actual) == (
        "export_run_bytes",
        20,
        23,
    )
    charge(ledger, read_files(tree, ["/workspace/out/b.bin"]), limits)
    with pytest.raises(BoxQuotaExceededError) as caught:
        charge(ledger, read_files(tree, ["/workspace/out/a.txt"]), ExportLimits(run_files=3))
    assert (caught.value.details["quota"], caught.value.limit, caught.value.actual) == (
        "export_run_files",
        3,
        4,
    )
    assert len(ledger.files) == 3  # refused batches left the ledger as it was


def test_compare_and_delete_removes_only_unchanged_selected_files(
    tree: SandboxFiles, tmp_path: Path
) -> None:
    a, b = read_files(tree, ["/workspace/out/a.txt", "/workspace/out/b.bin"])
    (tmp_path / "ws" / "out" / "b.bin").write_bytes(b"rewritten")
    assert remove_if_unchanged(tree, a.path, a.sha256) is None
    assert remove_if_unchanged(tree, b.path, b.sha256) == "changed"
    assert remove_if_unchanged(tree, a.path, a.sha256) == "missing"
    assert not (tmp_path / "ws" / "out" / "a.txt").exists()
    assert (tmp_path / "ws" / "out" / "b.bin").read_bytes() == b"rewritten"
    assert (tmp_path / "tmp" / "t.txt").exists()  # never selected: never touched
    (tmp_path / "ws" / "out" / "link").symlink_to(tmp_path / "tmp" / "t.txt")
    digest = hashlib.sha256(b"temp").hexdigest()
    assert remove_if_unchanged(tree, "/workspace/out/link", digest) == "symlink"
    assert (tmp_path / "tmp" / "t.txt").exists()


def test_a_malformed_answer_is_refused_as_such() -> None:
    data = b"content"
    good = ReadFileInfo(
        path="/workspace/a",
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        mode=0o644,
        uid=0,
        gid=0,
        mtime_ns=0,
        file_key="k",
    )
    store = {"k": data}
    assert accept_read(["/workspace/a"], ReadFilesResult(files=[good]), store.__getitem__)
    cases: list[tuple[list[ReadFileInfo], dict[str, bytes]]] = [
        ([good.model_copy(update={"path": "/workspace/b"})], store),
        ([], store),
        ([good], {}),
        ([good.model_copy(update={"sha256": "0" * 64})], store),
        ([good.model_copy(update={"size": 3})], store),
    ]
    for files, keys in cases:
        with pytest.raises(BoxExportRefusedError) as caught:
            accept_read(["/workspace/a"], ReadFilesResult(files=files), keys.__getitem__)
        assert caught.value.details["reason"] == "invalid_response"


# --------------------------------------------------------------------------- served


async def test_export_over_the_wire_needs_an_existing_session(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with (
        served_box(runtime) as box,
        BoxClient.connect(box.url, instance_id="inst-1", context=CONTEXT) as client,
    ):
        with pytest.raises(BoxSessionNotFoundError):
            await client.read_files("s1", ["/workspace/a"])
        assert fake.started == []  # an export never creates a session
        await client.create_session(session_id="s1")
        workspace = anyio.Path(fake.started[0].mounts[0].host_path)
        payload = os.urandom(3 * MIB)  # several chunks
        await (workspace / "out.bin").write_bytes(payload)
        await (workspace / "keep.txt").write_text("unselected")
        (exported,) = await client.read_files("s1", ["/workspace/out.bin"], run_id="run-1")
        assert exported.data == payload
        again = await client.read_files("s1", ["/workspace/out.bin"], run_id="run-1")
        assert again[0].sha256 == exported.sha256
        report = await client.remove_files_if_match("s1", [(exported.path, exported.sha256)])
        assert report.removed == ["/workspace/out.bin"]
        assert report.kept == []
        assert not await (workspace / "out.bin").exists()
        assert await (workspace / "keep.txt").exists()
        with pytest.raises(BoxQuotaExceededError) as caught:
            await client.read_files("s1", [f"/workspace/f{i}" for i in range(21)])
        assert caught.value.details["files_retained"] is True
