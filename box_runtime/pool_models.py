"""What ``box_status`` says about the warm pool (:mod:`box_runtime.pool`).

One :class:`PoolSpecStatus` per kind of warm sandbox the configuration asks for (the
default image and each entry of ``box.pool.images``, under the active profile), and
the pool's totals in :class:`PoolStatus`. All zero and empty when there is no pool.
"""

from __future__ import annotations

import datetime as dt

from pydantic import Field

from langbot_plugin.protocol.spec import Result

__all__ = ["PoolSpecStatus", "PoolStatus"]


class PoolSpecStatus(Result):
    """The warm sandboxes of one image (with the profile's other settings)."""

    image: str
    profile: str
    #: How many idle sandboxes the configuration asks for.
    target: int
    #: Idle sandboxes ready for a new session now.
    ready: int
    #: Sandboxes being created for the pool now.
    refilling: int
    #: Why the last create for this kind failed (cleared by the next success).
    last_error: str | None = None
    last_error_at: dt.datetime | None = None


class PoolStatus(Result):
    """The warm pool as a whole; ``specs`` lists each kind of warm sandbox."""

    #: Whether the configuration asks for any warm sandbox.
    enabled: bool = False
    #: How many ``box.pool`` asks for in all (``target`` once a backend serves them).
    configured: int = 0
    #: How many the pool keeps for the selected backend (sum of the specs' targets).
    target: int = 0
    ready: int = 0
    refilling: int = 0
    refill_concurrency: int = 0
    #: Sessions that adopted a warm sandbox, and warm sandboxes made, since the start.
    adopted: int = 0
    created: int = 0
    specs: list[PoolSpecStatus] = Field(default_factory=list[PoolSpecStatus])
    #: The most recent create failure of any kind, while it is not resolved.
    last_error: str | None = None
