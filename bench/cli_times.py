"""Wall time of short CLI commands, measured from a parent process.

Each command runs once to warm the page cache, then ``runs`` times; the result is the
list of wall times (spawn to exit, stdout discarded). The interpreter floor,
``python -c pass`` of the same interpreter, is measured the same way.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Sequence

__all__ = ["time_command"]


def time_command(
    argv: Sequence[str], runs: int = 10, env: dict[str, str] | None = None
) -> list[float]:
    samples: list[float] = []
    for i in range(runs + 1):
        t0 = time.perf_counter()
        proc = subprocess.run(
            list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, check=False
        )
        elapsed = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr[-500:]!r}")
        if i:
            samples.append(elapsed)
    return samples
