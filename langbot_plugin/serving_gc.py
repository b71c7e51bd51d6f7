"""The garbage collector's settings for our long-running processes.

``lbp rt``, ``lbp box`` and plugin workers call :func:`settle_for_serving` once they
have started. Two changes to CPython's defaults, both for the same reason: a daemon
serving many overlapping calls keeps thousands of short-lived container objects alive
at once (each call's task, futures, frame dicts and models), and the collector counts
*net* allocations. With the default first threshold (700) a burst of 200 concurrent
``call_tool`` ran a young collection every 15 calls and a full one every few hundred,
all of them finding nothing (the request path leaves no reference cycles): about 20 %
of the runtime's CPU.

* The first threshold is raised to :data:`YOUNG_THRESHOLD`, so a collection runs per a
  few hundred calls, not per 15. The cost is bounded: at most that many unreachable
  objects wait for a collection, a few megabytes at worst.
* What startup left behind (modules, classes, the action tables, settings) is moved to
  the permanent generation (``gc.freeze``): a full collection then walks only what was
  made since, not the whole interpreter.

A library never does this to its host's process: the host-side client
(:mod:`langbot_plugin.host`) leaves the collector alone. This module imports nothing of
ours, so any layer may call it.
"""

from __future__ import annotations

import gc

__all__ = ["YOUNG_THRESHOLD", "settle_for_serving"]

#: Net allocations of container objects between two young collections (CPython: 700).
YOUNG_THRESHOLD = 20_000


def settle_for_serving() -> None:
    """Collect once, freeze what survives, and raise the young threshold (idempotent:
    calling it again freezes what was made since)."""
    gc.collect()
    gc.freeze()
    young, middle, old = gc.get_threshold()
    gc.set_threshold(max(YOUNG_THRESHOLD, young), middle, old)
