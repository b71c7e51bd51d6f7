"""Loaded at start-up by a child whose PYTHONPATH names this folder (``tests/support/posix.py``):
as on Windows, the POSIX-only modules are refused and ``os`` has no user ids, before
anything else runs."""

import os
import sys

HIDDEN = frozenset({"fcntl", "grp", "pwd", "resource", "termios"})
NO_IDS = ("getuid", "geteuid", "getgid", "getegid")


class RefusePosixOnly:
    def find_spec(self, name, path=None, target=None):
        if name in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r} (hidden by the test)", name=name)


for _name in HIDDEN:
    sys.modules.pop(_name, None)
sys.meta_path.insert(0, RefusePosixOnly())
for _name in NO_IDS:
    delattr(os, _name)
