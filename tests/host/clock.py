"""A clock tests move by hand (no sleeping, no wall time)."""

from __future__ import annotations


class FakeClock:
    """Callable like ``time.time``; starts at ``start`` and moves only with :meth:`advance`."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
