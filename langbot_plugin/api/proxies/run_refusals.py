"""The refusals the SDK makes for a run before anything is sent, kept for its audit.

The run proxy refuses locally a call the run's grants do not cover, or one made
after the run ended or past its deadline; the plugin-level API refuses a call bound
to an ended run. Nothing reaches the runtime or the host, so the SDK keeps these per
run (:class:`RunRefusals`, held by the run's
:class:`~langbot_plugin.api.proxies.run_binding.RunBinding`) and reports them to the
runtime (``report_run_audit``): when, within which bounds (:data:`MAX_PENDING`) and
what the audit cannot hold is ``docs/security.md``, "Refusals the host never sees".
A runtime that does not know the action (the reference's), or a report that fails,
stops the reports of that run.
"""

from __future__ import annotations

import time
from typing import cast

from langbot_plugin.protocol.callers import Caller
from langbot_plugin.protocol.run_audit import (
    MAX_REPORTED_ENTRIES,
    REPORT_RUN_AUDIT,
    ReportRunAuditParams,
    RunAuditEntry,
)
from langbot_plugin.rpc.errors import RPCError
from langbot_plugin.rpc.redaction import redact

__all__ = ["MAX_PENDING", "RunRefusals"]

#: Refusals kept at most between two reports.
MAX_PENDING = MAX_REPORTED_ENTRIES
#: How long a report may wait for the runtime.
REPORT_WAIT_SECONDS = 5.0


class RunRefusals:
    """The SDK-local refusals of one run, waiting to be reported (see the module
    docstring)."""

    __slots__ = ("channel", "dropped", "pending", "run_id", "unsupported")

    def __init__(self, run_id: str, channel: object) -> None:
        self.run_id = run_id
        self.channel = channel
        self.pending: list[RunAuditEntry] = []
        self.dropped = 0
        self.unsupported = False

    def note(self, action: str, resource: object, code: str, message: str) -> None:
        """Keep one refusal (never waits)."""
        if len(self.pending) >= MAX_PENDING:
            self.dropped += 1
            return
        self.pending.append(
            RunAuditEntry.model_construct(
                at=time.time(),
                kind="call",
                duration_ms=None,
                origin="sdk",
                action=action,
                resource=None if resource is None else redact(str(resource)),
                code=code,
                detail={"error": redact(message)},
            )
        )

    async def report(self) -> None:
        """Send what is waiting to the runtime (nothing if nothing is)."""
        if not (self.pending or self.dropped) or self.channel is None:
            return
        entries, self.pending = self.pending, []
        dropped, self.dropped = self.dropped, 0
        if self.unsupported:
            return
        params = ReportRunAuditParams(run_id=self.run_id, entries=entries, dropped=dropped)
        try:
            await REPORT_RUN_AUDIT.call(
                cast(Caller, self.channel), params, timeout=REPORT_WAIT_SECONDS
            )
        except RPCError:
            # a runtime without the run audit (the reference's), one that refused, or a
            # connection that is going: not asked again for this run
            self.unsupported = True
