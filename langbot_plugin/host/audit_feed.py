"""What a run's audit gets when the run ends: the refusals the host never saw, then
the result summary.

When a run's stream has closed, :func:`pull_runtime_audit` asks the plugin runtime for
the refusals it and the SDK made (``get_run_audit``,
:mod:`langbot_plugin.runtime.run_audit`) and adds them to the run's audit;
:func:`audit_run_end` then writes ``run.ended``. The host pulls, so a dead worker or a
late host loses nothing and a host that never asks changes nothing; a runtime that
cannot answer leaves ``runtime_audit: "unavailable"``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from langbot_plugin.host.audit import AuditLog
from langbot_plugin.host.registry import RunSession
from langbot_plugin.host.run_outcome import RunOutcome
from langbot_plugin.protocol.run_audit import RunAudit, RunAuditEntry
from langbot_plugin.rpc.errors import RPCError

__all__ = [
    "RuntimeAuditSource",
    "RuntimeAuditStatus",
    "audit_run_end",
    "pull_runtime_audit",
    "record_runtime_audit",
]

logger = logging.getLogger("langbot_plugin.host.audit")

#: Asks the plugin runtime for a run's record (``PluginRuntimeClient.get_run_audit``).
RuntimeAuditSource = Callable[[str], Awaitable[RunAudit]]

_ORIGINS = frozenset({"runtime", "sdk"})


def record_runtime_audit(
    audit: AuditLog, run_id: str, entries: Iterable[Mapping[str, Any] | RunAuditEntry]
) -> None:
    """Add entries a plugin runtime kept for the run (refusals the host never saw),
    marked with their origin (``runtime``, or ``sdk`` for the SDK's local ones)."""
    for raw in entries:
        entry = raw.model_dump() if isinstance(raw, RunAuditEntry) else raw
        origin = entry.get("origin")
        audit.record(
            run_id,
            str(entry.get("kind") or "call"),
            **{k: entry.get(k) for k in ("action", "resource", "grant", "code", "duration_ms")},
            detail=dict(entry.get("detail") or {}),
            origin=origin if origin in _ORIGINS else "runtime",
            at=entry.get("at"),
        )


@dataclass(frozen=True, slots=True)
class RuntimeAuditStatus:
    """How the pull went (``pulled``, ``unknown``: the runtime kept nothing for the run,
    ``unavailable``, ``not_asked``), and how many entries the runtime could not keep."""

    state: str = "not_asked"
    dropped: int = 0


async def pull_runtime_audit(
    audit: AuditLog, run_id: str, source: RuntimeAuditSource | None
) -> RuntimeAuditStatus:
    """Ask the runtime for ``run_id``'s refusals and add them to its audit."""
    if source is None:
        return RuntimeAuditStatus()
    try:
        record = await source(run_id)
    except (RPCError, TimeoutError, ConnectionError) as exc:
        logger.info("no runtime audit for run %s: %s", run_id, exc)
        return RuntimeAuditStatus("unavailable")
    record_runtime_audit(audit, run_id, record.entries)
    return RuntimeAuditStatus("pulled" if record.known else "unknown", record.dropped)


async def audit_run_end(
    audit: AuditLog,
    session: RunSession,
    outcome: RunOutcome,
    runtime: RuntimeAuditStatus | None = None,
) -> None:
    """The run's final result summary, then its audit written out."""
    runtime = runtime or RuntimeAuditStatus()
    error = outcome.error or {}
    audit.record(
        session.run_id,
        "run.ended",
        code=error.get("code"),
        detail={
            "status": outcome.status,
            "error": error.get("error"),
            "messages": len(outcome.messages),
            "answer_chars": len(outcome.text),
            "results": len(outcome.results),
            "dropped_results": len(outcome.dropped),
            "usage": outcome.usage,
            "dropped_entries": audit.dropped(session.run_id),
            "runtime_audit": runtime.state,
            "runtime_dropped_entries": runtime.dropped,
        },
    )
    audit.forget_counts(session.run_id)
    await audit.flush()
