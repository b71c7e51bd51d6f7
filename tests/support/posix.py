"""A child environment without the POSIX-only modules (``fcntl``, ``grp``, ``pwd``,
``resource``, ``termios``) and without ``os.getuid``, ``geteuid``, ``getgid`` and
``getegid``, as a Python on Windows has none of them.

:func:`hidden_posix_env` puts ``tests/support/posix_hidden`` first on ``PYTHONPATH``:
its ``sitecustomize`` refuses those imports and removes those functions in any Python
started with that environment (and in that Python's own children), before the program
runs. ``windows_os=True`` removes the other ``os`` and ``signal`` names Windows lacks
too (``O_NOFOLLOW``, ``chown``, ``SIGKILL``...; the list is in its ``sitecustomize``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from box_runtime.portable import POSIX_ONLY

__all__ = ["HIDDEN", "hidden_posix_env"]

#: What the child refuses (its ``sitecustomize`` names them again: it runs first).
HIDDEN = POSIX_ONLY
_SITE = Path(__file__).resolve().parent / "posix_hidden"


def hidden_posix_env(
    base: Mapping[str, str] | None = None, *, windows_os: bool = False
) -> dict[str, str]:
    """``base`` (default this process's environment) with the POSIX-only modules hidden."""
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_SITE), env.get("PYTHONPATH", "")]))
    env["LBP_TEST_WINDOWS_OS"] = "1" if windows_os else "0"
    return env
