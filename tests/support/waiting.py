"""A bounded wait for a condition nothing signals.

For state another process owns (a port, a file a sandbox writes, a jail in the
process table) or that a background task changes without an event to wait on. State
this process could signal should have an event instead (``ASYNC110`` is on for tests).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable

import anyio

__all__ = ["PATIENCE", "wait_until"]

#: How long a test waits for something that should happen. Long enough that only a hang
#: reaches it, even on a loaded 2-core CI machine (a short window there is a random red
#: run); shorter than the suite's 60 s limit per test (tests/timeouts.py), so a hang
#: fails at the wait it names.
PATIENCE = 40.0


async def wait_until(
    check: Callable[[], bool | Awaitable[bool]], seconds: float = PATIENCE, interval: float = 0.05
) -> None:
    """Return once ``check()`` is true; fail with ``TimeoutError`` after ``seconds``."""
    with anyio.fail_after(seconds):
        while True:
            outcome = check()
            if inspect.isawaitable(outcome):
                outcome = await outcome
            if outcome:
                return
            await anyio.sleep(interval)
