"""Who a Docker (or Podman) sandbox runs as: ``docker.user``, by default ``auto``.

``auto`` picks a numeric user that can use the workspace from both sides (the Box's
own workspace: ``65534:65534``, or the Box's uid when it is not root; a ``host_path``:
its owner, uid 0 for a root-owned one); any other value is used as it is. The table
and the reasons: docs/box.md, *Docker*, "The sandbox user".
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from box_runtime.backends.base import SandboxPlan
from box_runtime.portable import effective_uid

__all__ = ["AUTO", "BOX_OWNED", "RunAs", "hand_over", "run_as"]

AUTO = "auto"
#: The user of an ``auto`` sandbox in a workspace a root Box made.
BOX_OWNED = (65534, 65534)


@dataclass(frozen=True, slots=True)
class RunAs:
    """The container's ``User`` (``""``: the image's), why, and the ids it stands for."""

    user: str
    why: str
    #: Numeric ``(uid, gid)`` of ``user``; ``None`` for a name or the image's user.
    ids: tuple[int, int] | None


def _numeric(text: str) -> tuple[int, int] | None:
    uid, _, gid = text.partition(":")
    if not uid.isdigit() or (gid and not gid.isdigit()):
        return None
    return int(uid), int(gid or uid)


def _of(ids: tuple[int, int], why: str) -> RunAs:
    return RunAs(f"{ids[0]}:{ids[1]}", why, ids)


def run_as(configured: str, plan: SandboxPlan, *, box_uid: int | None) -> RunAs:
    """The user a session's container runs as under ``docker.user = configured``.

    ``box_uid``: the Box's effective uid (``None`` where the system has none).
    """
    if configured != AUTO:
        why = "docker.user" if configured else "the image's user (docker.user is empty)"
        return RunAs(configured, why, _numeric(configured))
    if not plan.workspace_owned:
        workspace = plan.mounts[0].host_path
        try:
            info = os.stat(workspace)
        except OSError:
            pass  # not on this machine (a remote engine's own path): as if the Box's
        else:
            owner = (info.st_uid, info.st_gid)
            if owner[0] == 0:
                return _of(owner, f"the workspace {workspace} belongs to root")
            return _of(owner, f"the owner of the workspace {workspace}")
    if box_uid is None or box_uid == 0:
        return _of(BOX_OWNED, "the Box's own workspace, handed to nobody")
    getegid = getattr(os, "getegid", None)
    gid = box_uid if getegid is None else int(getegid())
    return _of((box_uid, gid), "the Box's own workspace (a Box that is not root keeps it)")


def hand_over(run: RunAs, plan: SandboxPlan) -> None:
    """Give the session's own folders to ``run``'s user (a root Box with a numeric user).

    Scratch and home are handed over; the workspace too when the Box made it, with
    whatever it holds the first time (a workspace made for another user before), never
    following a link.
    """
    if run.ids is None or effective_uid() != 0:
        return
    uid, gid = run.ids
    for folder in (plan.tmp_dir, plan.home_dir):
        os.chown(folder, uid, gid, follow_symlinks=False)
    if not plan.workspace_owned:
        return
    workspace = plan.mounts[0].host_path
    info = os.lstat(workspace)
    if (info.st_uid, info.st_gid) == (uid, gid):
        return
    for root, dirs, files in os.walk(workspace):
        for name in (*dirs, *files):
            os.chown(os.path.join(root, name), uid, gid, follow_symlinks=False)
    os.chown(workspace, uid, gid, follow_symlinks=False)
