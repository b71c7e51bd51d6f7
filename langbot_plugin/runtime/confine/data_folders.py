"""Each worker's private data folder, and (as root) the user id that owns it.

``<data>/plugin-data/<key>/`` (the installation's id, or ``shared-...`` for a shared
worker) is the worker's ``HOME``: the one place it may write, kept across restarts and
upgrades, removed with the installation. As root every folder belongs to a user id of
its own from :data:`UID_BASE` up, and that is the id its worker runs as; the folder's
owner *is* the record of the allocation, so it survives restarts with nothing else to
keep. The folder of one plugin is mode 0700: no other plugin's user may enter it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

__all__ = ["UID_BASE", "UID_COUNT", "DataFolders"]

#: Plugin user ids: above the ranges systemd and container engines hand out
#: (systemd-nspawn's end at 0x6FFFFFFF), below systemd's "foreign" range (0x7FFE0000).
UID_BASE = 0x70000000
UID_COUNT = 0x10000


class DataFolders:
    def __init__(self, root: Path) -> None:
        self.root = root

    def folder(self, key: str, *, own_uid: bool) -> tuple[Path, int | None]:
        """The data folder of ``key`` (made if new) and, with ``own_uid`` (as root, for a
        confined worker), the user id that owns it."""
        self.root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o711)
        folder = self.root / key
        if not own_uid:
            folder.mkdir(mode=0o700, exist_ok=True)
            return folder, None
        uid = self._owner(folder)
        if uid is None:
            uid = self._free_uid()
            folder.mkdir(mode=0o700, exist_ok=True)
            for place, _, files in os.walk(folder):  # a folder made before it was confined
                for name in (place, *(os.path.join(place, f) for f in files)):
                    os.chown(name, uid, uid, follow_symlinks=False)
            os.chmod(folder, 0o700)
        return folder, uid

    def remove(self, key: str) -> None:
        shutil.rmtree(self.root / key, ignore_errors=True)

    @staticmethod
    def _owner(folder: Path) -> int | None:
        with contextlib.suppress(OSError):
            uid = folder.stat().st_uid
            if UID_BASE <= uid < UID_BASE + UID_COUNT:
                return uid
        return None

    def _free_uid(self) -> int:
        taken = {self._owner(p) for p in self.root.iterdir()}
        for uid in range(UID_BASE, UID_BASE + UID_COUNT):
            if uid not in taken:
                return uid
        raise OSError(f"no free plugin user id left in {UID_COUNT} (under {self.root})")
