"""The tasks a session starts while serving: one per request, reply or cancel notice.

A session starts a task for nearly every frame it receives, so the cost of starting one
is on the path of every call. anyio's ``TaskGroup.start_soon`` costs about 40 µs a task
on asyncio (it wraps each task in its own cancel-scope bookkeeping); a plain asyncio
task costs about 7 µs. :class:`RequestTasks` keeps the one guarantee the session needs
from a task group, that no task outlives the session: :meth:`aclose` cancels what is
still running and waits for it. A task that fails (which the session's own handlers
never let happen: they turn every exception into a wire error) is logged once
(:func:`.failures.log_failure`: a coded error in one line, anything else with its
traceback) and does not take the connection down.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

import anyio

from langbot_plugin.rpc.failures import log_failure

logger = logging.getLogger(__name__)


class RequestTasks:
    """A set of asyncio tasks that are all cancelled and awaited on :meth:`aclose`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False

    def __len__(self) -> int:
        return len(self._tasks)

    def start(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run ``coro`` in a new task; after :meth:`aclose` it is closed unstarted."""
        if self._closed:
            coro.close()
            return
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:  # coded (a timeout, say): one line; anything else: a traceback
            log_failure(logger, self.name, "a serving task", error)

    async def aclose(self) -> None:
        """Cancel every task still running and wait until all have finished."""
        self._closed = True
        with anyio.CancelScope(shield=True):
            while self._tasks:
                pending = set(self._tasks)
                for task in pending:
                    task.cancel()
                await asyncio.wait(pending)
