"""Run a command's main coroutine until it returns or SIGTERM/SIGINT arrives.

A signal cancels the work (so its ``finally`` blocks and ``async with`` exits run: child
processes are stopped, trace batches flushed) and is named on stderr as
``<who>: SIGTERM; stopping``. An exception of the work is raised as itself, not wrapped
in a task group's exception group, so a command's error handling sees what it expects.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

__all__ = ["until_signalled"]

T = TypeVar("T")


async def until_signalled(work: Callable[[], Awaitable[T]], who: str) -> T | None:
    """``work()``'s result, or ``None`` when a signal stopped it first."""
    results: list[T] = []
    failures: list[Exception] = []
    async with anyio.create_task_group() as tg:

        async def watch() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for received in signals:
                    sys.stderr.write(f"{who}: {signal.Signals(received).name}; stopping\n")
                    tg.cancel_scope.cancel()
                    return

        async def main() -> None:
            try:
                results.append(await work())
            except Exception as exc:  # re-raised below, outside the group
                failures.append(exc)
            tg.cancel_scope.cancel()

        tg.start_soon(watch)
        tg.start_soon(main)
    if failures:
        raise failures[0]
    return results[0] if results else None
