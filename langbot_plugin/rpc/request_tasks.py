"""The tasks a session starts while serving: one per request, reply or cancel notice.

A plain asyncio task costs about 7 µs to start, anyio's ``start_soon`` about 40 µs, and
this is on the path of every call. :class:`RequestTasks` keeps the one guarantee the
session needs of a task group: no task outlives it (:meth:`aclose` cancels and waits).
A task that fails is logged once (:func:`.failures.log_failure`) and does not take the
connection down.
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
