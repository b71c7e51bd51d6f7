"""Who a container runs as (``docker.user``), and the Box's folders handed to that user.

The engine side (a container's ``id -u``, the files it writes) is in the conformance
suite (``test_a_container_runs_as_*``), on Docker, Podman and Docker over TLS.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from box_runtime.backends.docker_user import BOX_OWNED, hand_over, run_as
from tests.box.helpers import sandbox_plan

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown needs a root test process")


def folders(tmp_path: Path) -> Path:
    for name in ("ws", "tmp", "home"):
        (tmp_path / name).mkdir()
    return tmp_path


def test_explicit_users_are_kept_and_empty_is_the_images(tmp_path: Path) -> None:
    plan = sandbox_plan(str(folders(tmp_path)))
    assert (run_as("2000:3000", plan, box_uid=0).user, run_as("2000", plan, box_uid=0).ids) == (
        "2000:3000",
        (2000, 2000),
    )
    assert run_as("sandbox", plan, box_uid=0).ids is None  # a name: the image resolves it
    image = run_as("", plan, box_uid=0)
    assert (image.user, image.ids) == ("", None)


def test_auto_in_the_boxs_own_workspace_is_nobody_or_the_box_itself(tmp_path: Path) -> None:
    plan = sandbox_plan(str(folders(tmp_path)))
    assert run_as("auto", plan, box_uid=0).ids == BOX_OWNED
    assert run_as("auto", plan, box_uid=None).ids == BOX_OWNED  # a system without uids
    # A Box that is not root cannot hand its folders over: its own ids.
    assert run_as("auto", plan, box_uid=1500).ids == (1500, os.getegid())


@needs_root
def test_auto_in_a_host_workspace_is_its_owner(tmp_path: Path) -> None:
    root = folders(tmp_path)
    plan = sandbox_plan(str(root), workspace_owned=False)
    os.chown(root / "ws", 1234, 2345)
    chosen = run_as("auto", plan, box_uid=0)
    assert (chosen.user, chosen.why) == ("1234:2345", f"the owner of the workspace {root}/ws")
    os.chown(root / "ws", 0, 0)
    assert run_as("auto", plan, box_uid=0).ids == (0, 0)


@needs_root
def test_the_boxs_folders_are_handed_over_once_without_following_links(tmp_path: Path) -> None:
    root = folders(tmp_path)
    outside = tmp_path / "outside"
    outside.write_text("not the sandbox's")
    workspace = root / "ws"
    (workspace / "old").mkdir()  # made for root by an earlier Box
    (workspace / "old" / "f").write_text("x")
    (workspace / "old" / "link").symlink_to(outside)
    plan = sandbox_plan(str(root))
    hand_over(run_as("auto", plan, box_uid=0), plan)
    for path in (
        root / "tmp",
        root / "home",
        workspace,
        workspace / "old",
        workspace / "old" / "f",
    ):
        assert (path.stat().st_uid, path.stat().st_gid) == BOX_OWNED, path
    assert (workspace / "old" / "link").lstat().st_uid == BOX_OWNED[0]
    assert outside.stat().st_uid == 0  # the link was not followed
    # A host workspace is never touched.
    host = sandbox_plan(str(root), workspace_owned=False)
    os.chown(workspace, 0, 0)
    hand_over(run_as("2000:2000", host, box_uid=0), host)
    assert workspace.stat().st_uid == 0
    assert (root / "tmp").stat().st_uid == 2000
