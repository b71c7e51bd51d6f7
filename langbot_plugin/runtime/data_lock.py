"""One ``lbp rt`` per data folder: an advisory lock held for the life of the process.

Two runtimes writing the same installations, debug keys and environments would
corrupt each other; the second one waits briefly (LangBot may start a new runtime
while the previous one is still stopping) and then refuses with
:class:`DataDirBusyError`, naming the process that holds the folder. The lock is
released by the operating system when the process ends, however it ends.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import IO

__all__ = ["LOCK_FILE", "DataDirBusyError", "hold_data_dir"]

logger = logging.getLogger("langbot_plugin.runtime")

LOCK_FILE = ".lbp-rt.lock"


class DataDirBusyError(Exception):
    """Another process holds the runtime's data folder."""


def hold_data_dir(data_dir: Path, *, wait_seconds: float = 20.0) -> IO[str] | None:
    """Lock ``data_dir`` (created if needed); keep the returned file open while serving.

    Returns ``None`` where advisory locks are not available (then nothing is checked).
    """
    try:
        import fcntl
    except ImportError:  # Windows: no flock; one runtime per folder is on the operator
        return None
    data_dir.mkdir(parents=True, exist_ok=True)
    handle = (data_dir / LOCK_FILE).open("a+", encoding="utf-8")
    deadline = time.monotonic() + wait_seconds
    told = False
    while True:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                handle.close()
                raise DataDirBusyError(
                    f"the data folder {data_dir} is in use by {holder}; stop it or give this "
                    "runtime its own folder with --data-dir"
                ) from None
            if not told:
                logger.info("waiting for another runtime to release %s", data_dir)
                told = True
            time.sleep(0.2)
    handle.seek(0)
    handle.truncate()
    handle.write(f"lbp rt (pid {os.getpid()})\n")
    handle.flush()
    return handle
