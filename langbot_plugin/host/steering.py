"""The steering queue of a live run: follow-up input the runner pulls between turns.

When a message arrives for a conversation whose run is still working (and whose
grants include ``steering_pull``), the host may hand it to that run instead of
starting a new one. It waits here until the runner calls ``steering_pull``:
``mode="all"`` takes everything queued (at most ``limit``, at most 100), ``"one"``
(also spelled ``"one-at-a-time"`` / ``"one_at_a_time"``) takes the oldest item. Items
leave the queue when pulled; a finished run's queue is discarded.
"""

from __future__ import annotations

import copy
from collections import deque
from typing import Any

from langbot_plugin.rpc.errors import InvalidParamsError

__all__ = ["MAX_PULL", "MAX_QUEUED", "SteeringQueue"]

#: Items one queue holds; further pushes are refused (the host starts a new run instead).
MAX_QUEUED = 100
#: Items one pull returns at most.
MAX_PULL = 100

_ONE = frozenset({"one", "one-at-a-time", "one_at_a_time"})


class SteeringQueue:
    """A bounded FIFO of steering items (JSON objects shaped as ``SteeringInputItem``)."""

    def __init__(self, capacity: int = MAX_QUEUED) -> None:
        self.capacity = capacity
        self._items: deque[dict[str, Any]] = deque()
        self.closed = False

    def __len__(self) -> int:
        return len(self._items)

    def push(self, item: dict[str, Any]) -> bool:
        """Queue a copy of ``item``; ``False`` when the queue is full or closed."""
        if self.closed or len(self._items) >= self.capacity:
            return False
        self._items.append(copy.deepcopy(item))
        return True

    def pull(self, mode: str = "all", limit: int | None = None) -> list[dict[str, Any]]:
        """Take the oldest items: one for ``mode="one"``, else up to ``limit`` (max 100)."""
        normalized = (mode or "all").lower()
        if normalized in _ONE:
            count = 1
        elif normalized == "all":
            count = MAX_PULL if limit is None else limit
        else:
            raise InvalidParamsError(
                f"unknown steering mode {mode!r}; use 'all' or 'one'", details={"mode": mode}
            )
        if count <= 0:
            raise InvalidParamsError("limit must be > 0", details={"limit": limit})
        count = min(count, MAX_PULL, len(self._items))
        return [self._items.popleft() for _ in range(count)]

    def close(self) -> list[dict[str, Any]]:
        """Refuse further items; return (and drop) what was never pulled."""
        self.closed = True
        left = list(self._items)
        self._items.clear()
        return left
