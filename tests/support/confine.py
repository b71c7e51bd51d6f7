"""Whether ``lbp rt`` confines plugin workers on this machine, by the runtime's own probe.

A test of a confined mode skips where the machine cannot confine in that mode, or fails
when ``LBP_REQUIRE_NSJAIL=1`` (set by ``.ci/run``), as the Box's nsjail tests do.
"""

from __future__ import annotations

import concurrent.futures
import functools
import os
import tempfile
from pathlib import Path

import anyio
import pytest

from langbot_plugin.runtime.confine import Confinement, ConfinementOptions, Decision

__all__ = ["confinement_here", "require_confinement"]


@functools.cache
def confinement_here() -> Decision:
    """The mode a runtime started here by this user chooses (with its reason)."""

    async def decide() -> Decision:
        with tempfile.TemporaryDirectory(prefix="lbp-confine-probe-") as data:
            return await Confinement(ConfinementOptions(), Path(data)).decide()

    # in a thread of its own: callers may be inside a running event loop
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, decide).result()


def require_confinement(*, as_root: bool, cgroups: bool = False) -> None:
    """Skip (or fail under ``LBP_REQUIRE_NSJAIL=1``) unless a runtime started here
    confines its workers (as root, if ``as_root``; with cgroups, if ``cgroups``)."""
    decision = confinement_here()
    reason = None
    if as_root and os.geteuid() != 0:
        reason = "the root mode needs root"
    elif not decision.confined:
        reason = f"plugin workers cannot be confined here: {decision.why}"
    elif cgroups and decision.cgroups.version == "none":
        reason = f"no cgroup for plugin workers here: {decision.cgroups.reason}"
    if reason is None:
        return
    if os.environ.get("LBP_REQUIRE_NSJAIL") == "1":
        pytest.fail(f"LBP_REQUIRE_NSJAIL=1 but {reason}")
    pytest.skip(reason)
