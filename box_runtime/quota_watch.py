"""A session's workspace measured against its quota, while and after a command runs.

The runtime's side of :mod:`box_runtime.quota`: :func:`measure` is what the workspace
holds now, :func:`watched` runs a command while measuring a ``watch``-enforced
workspace and stops it once the workspace grew past the quota (a command that only
reads or deletes is never stopped), and :func:`report` says, after a command, whether
the workspace is at its quota.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import anyio

from box_runtime.errors import BoxQuotaExceededError
from box_runtime.models import QuotaReport
from box_runtime.quota import volume_usage
from box_runtime.sessions import Session
from box_runtime.storage import measure_tree
from box_runtime.task_groups import single_error

__all__ = ["WATCH_INTERVAL_SEC", "QuotaStop", "exceeded_error", "measure", "report", "watched"]

T = TypeVar("T")

#: How often a ``watch``-enforced workspace is measured while a command runs.
WATCH_INTERVAL_SEC = 0.2
#: A quota filesystem counts as full below this much free space (or 5 % of the quota):
#: a writer stops with ENOSPC while less than its next write is still free.
_FULL_MARGIN = 256 * 1024


@dataclass(frozen=True, slots=True)
class QuotaStop:
    """Why the watcher stopped a command: the workspace reached ``actual`` bytes."""

    actual: int


def _limit(session: Session) -> int:
    return session.spec.workspace_quota_mb * 1024 * 1024


def _measure_blocking(session: Session, max_entries: int) -> tuple[int, int]:
    """``(used, free)`` bytes; ``free`` is -1 when the filesystem does not bound it."""
    plan = session.plan
    if plan.quota_enforcement == "filesystem":
        used, free, _ = volume_usage(session.workspace_dir)
        return used, free
    total = 0
    for path in (session.workspace_dir, plan.tmp_dir, plan.home_dir):
        total += measure_tree(path, max_entries=max_entries).size_bytes
    return total, -1


async def measure(session: Session, *, max_entries: int) -> tuple[int, int]:
    """What the session's writable directories hold now: ``(used, free)`` bytes."""
    return await anyio.to_thread.run_sync(_measure_blocking, session, max_entries)


async def watched(
    session: Session,
    run: Callable[[], Awaitable[T]],
    *,
    max_entries: int,
    stop: Callable[[QuotaStop], None],
) -> T | None:
    """Run ``run()`` and measure the workspace meanwhile; ``None`` if it was stopped.

    ``stop`` is called (once) when the workspace has grown past the quota during the
    command; it must cancel the command (the runtime cancels the command's scope).
    """
    limit = _limit(session)
    start, _ = await measure(session, max_entries=max_entries)
    result: T | None = None

    async def watch() -> None:
        while True:
            await anyio.sleep(WATCH_INTERVAL_SEC)
            used, _ = await measure(session, max_entries=max_entries)
            if used > limit and used > start:
                stop(QuotaStop(used))
                return

    with single_error():
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch)
            result = await run()
            tg.cancel_scope.cancel()
    return result


def exceeded_error(session: Session, stopped: QuotaStop) -> BoxQuotaExceededError:
    """The error of a command the watcher stopped."""
    limit = _limit(session)
    return BoxQuotaExceededError(
        f"workspace quota of session {session.key.session_id} exceeded while the command "
        f"ran: {stopped.actual} bytes used, limit {limit} bytes; the command was stopped, "
        "the files were kept; delete files to continue",
        details={
            "quota": "workspace_bytes",
            "limit": limit,
            "actual": stopped.actual,
            "unit": "bytes",
            "enforcement": "watch",
            "files_retained": True,
        },
    )


async def report(session: Session, *, max_entries: int) -> QuotaReport | None:
    """The quota the workspace is at after a command, or ``None`` while it has room."""
    limit = _limit(session)
    if limit <= 0:
        return None
    enforcement = session.plan.quota_enforcement
    used, free = await measure(session, max_entries=max_entries)
    if enforcement == "filesystem":
        if free >= max(_FULL_MARGIN, limit // 20):
            return None
        how = "the workspace filesystem is full; writes beyond it were refused"
    elif used < limit:
        return None
    else:
        how = "the workspace is at or over its quota"
    return QuotaReport(
        limit=limit,
        actual=used,
        enforcement=enforcement,
        message=(
            f"workspace quota reached: {used} bytes used, limit {limit} bytes ({how}); "
            "the files were kept; delete files to free space"
        ),
    )
