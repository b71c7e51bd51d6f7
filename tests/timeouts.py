"""A time limit on every test, so that a hang fails the suite instead of stalling it.

Each test (setup, call and teardown together) has ``test_timeout`` seconds (ini option,
60 by default; ``--test-timeout N`` overrides it for a run, ``0`` turns the limit off,
for a debugger). A test that needs longer says so: ``@pytest.mark.timeout(300)``.

Three layers, each later one for what the one before cannot reach:

1. An async test runs under a cancel scope inside its own event loop. At the deadline
   the plugin notes where every task of the loop is waiting (the chain of awaits of
   each coroutine), then cancels the test: its ``finally`` blocks, task groups and
   async fixtures clean up as on any cancellation (child processes are stopped), and
   the test fails with the waiting tasks in its report.
2. ``grace`` seconds later (``test_timeout_grace``, 15 by default) ``SIGALRM`` raises
   :class:`TestTimeout` in the main thread, in whatever frame is running: a sync test,
   a fixture, code that blocks the event loop or swallows cancellation. The traceback
   ends in the frame that hung; the report adds the other threads and tasks.
3. Another ``grace`` later, if even that did not end the test, ``faulthandler`` dumps
   every thread to the real stderr and exits the run with status 1.

Why not pytest-timeout: its signal method raises ``pytest.fail`` from the signal
handler, which in an async test lands in the event loop's ``select()``; anyio's test
runner re-raises that outcome without cancelling the test's task, so the test's
cleanup never runs (e2e tests would leave ``lbp`` processes behind) and the traceback
shows the selector, not the await that hung. Its thread method ends the whole run at
the first hang.
"""

from __future__ import annotations

import asyncio
import faulthandler
import functools
import inspect
import linecache
import signal
import sys
import threading
import time
import traceback
from collections.abc import Generator
from types import FrameType
from typing import Any

import anyio
import pytest

__all__ = ["TestTimeout"]

DEFAULT_SECONDS = 60.0
DEFAULT_GRACE = 15.0
_MAX_TASKS = 40
_DEADLINE = pytest.StashKey[float]()
_LIMIT = pytest.StashKey[float]()


class TestTimeout(BaseException):
    """A test ran past its time limit (a BaseException, so ``except Exception`` keeps out)."""

    __test__ = False


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("test_timeout", "seconds each test may take (0: no limit)", default="60")
    parser.addini(
        "test_timeout_grace",
        "seconds after the limit before a test that ignores cancellation is interrupted",
        default=str(DEFAULT_GRACE),
    )
    parser.addoption(
        "--test-timeout",
        type=float,
        default=None,
        help="seconds each test may take, overriding the ini option and marks (0: no limit)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "timeout(seconds): this test may take longer than the default limit"
    )


def _limit(item: pytest.Item) -> float:
    forced = item.config.getoption("--test-timeout")
    if forced is not None:
        return float(forced)
    marker = item.get_closest_marker("timeout")
    if marker is not None:
        return float(marker.args[0])
    return float(item.config.getini("test_timeout") or DEFAULT_SECONDS)


def _grace(config: pytest.Config) -> float:
    return float(config.getini("test_timeout_grace") or DEFAULT_GRACE)


# ---------------------------------------------------------------- what was waiting


def _frame_line(frame: FrameType) -> str:
    code = frame.f_code
    source = linecache.getline(code.co_filename, frame.f_lineno).strip()
    return f'  File "{code.co_filename}", line {frame.f_lineno}, in {code.co_name}\n    {source}'


def _await_chain(task: asyncio.Task[Any]) -> list[str]:
    """The frames a task is suspended in, outermost first (through coroutines and
    ``yield from``; an ``async for`` over an async generator ends the chain)."""
    lines: list[str] = []
    awaiting: Any = task.get_coro()
    for _ in range(100):
        if awaiting is None:
            break
        frame = next(
            (
                getattr(awaiting, name)
                for name in ("cr_frame", "ag_frame", "gi_frame")
                if getattr(awaiting, name, None) is not None
            ),
            None,
        )
        if frame is not None:
            lines.append(_frame_line(frame))
        awaiting = next(
            (
                getattr(awaiting, name)
                for name in ("cr_await", "ag_await", "gi_yieldfrom")
                if getattr(awaiting, name, None) is not None
            ),
            None,
        )
    return lines


def _tasks_report(loop: asyncio.AbstractEventLoop | None) -> str:
    if loop is None:
        return ""
    tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
    parts = [f"{len(tasks)} task(s) of the event loop were waiting:"]
    for task in tasks[:_MAX_TASKS]:
        chain = _await_chain(task)
        parts.append(f"- {task.get_name()}:\n" + ("\n".join(chain) or "  (no frames)"))
    if len(tasks) > _MAX_TASKS:
        parts.append(f"... and {len(tasks) - _MAX_TASKS} more")
    return "\n".join(parts)


def _threads_report() -> str:
    main = threading.main_thread().ident
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    parts = [
        f"thread {names.get(ident, ident)}:\n" + "".join(traceback.format_stack(frame))
        for ident, frame in sys._current_frames().items()  # pyright: ignore[reportPrivateUsage]
        if ident != main
    ]
    return "\n".join(parts)


# ---------------------------------------------------------------- layer 1: async tests


def _guarded(test: Any, item: pytest.Item) -> Any:
    @functools.wraps(test)
    async def guarded(**kwargs: Any) -> None:
        loop = asyncio.get_running_loop()
        limit = item.stash[_LIMIT]
        report: list[str] = []
        scope = anyio.CancelScope()

        def expire() -> None:
            report.append(_tasks_report(loop))
            scope.cancel()

        timer = loop.call_later(max(0.0, item.stash[_DEADLINE] - time.monotonic()), expire)
        try:
            with scope:
                await test(**kwargs)
        except BaseException as exc:
            if report:
                pytest.fail(_timed_out(limit, report[0]), pytrace=False)
            raise exc
        finally:
            timer.cancel()
        if report:
            pytest.fail(_timed_out(limit, report[0]), pytrace=False)

    return guarded


def _timed_out(limit: float, report: str) -> str:
    return f"test timed out after {limit:g} s and was cancelled; {report}"


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, object, object]:
    original = pyfuncitem.obj
    if _LIMIT not in pyfuncitem.stash or not inspect.iscoroutinefunction(original):
        return (yield)
    pyfuncitem.obj = _guarded(original, pyfuncitem)
    try:
        return (yield)
    finally:
        pyfuncitem.obj = original


# ---------------------------------------------------------------- layers 2 and 3


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    limit = _limit(item)
    if limit <= 0 or threading.current_thread() is not threading.main_thread():
        return (yield)
    grace = _grace(item.config)
    item.stash[_LIMIT] = limit
    item.stash[_DEADLINE] = time.monotonic() + limit

    def interrupt(_signum: int, _frame: FrameType | None) -> None:
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        details = "\n".join(filter(None, [_tasks_report(loop), _threads_report()]))
        message = (
            f"test still running {grace:g} s after its {limit:g} s limit; interrupted where "
            f"the traceback ends\n{details}"
        )
        # Also straight to the real stderr: if the test ignores this too, layer 3 ends
        # the run before pytest can report it.
        if sys.__stderr__ is not None:
            sys.__stderr__.write(f"\n{item.nodeid}: {message}\n")
            sys.__stderr__.flush()
        raise TestTimeout(message)

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, limit + grace)
    real_stderr = sys.__stderr__ or sys.stderr
    faulthandler.dump_traceback_later(limit + 2 * grace, exit=True, file=real_stderr)
    try:
        return (yield)
    finally:
        faulthandler.cancel_dump_traceback_later()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
