"""The run audit the plugin runtime keeps: refusals the host never sees.

Two actions of ours (the released 4.11.2 host knows neither): ``get_run_audit`` (host
-> runtime), which a host asks once a run has ended, and ``report_run_audit`` (plugin
-> runtime), the refusals the SDK made before sending, reported at the end of each
runner step and of the run. An entry: ``{"at", "kind": "call", "origin": "runtime" |
"sdk", "action", "resource", "code", "duration_ms", "detail"}``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from langbot_plugin.protocol.spec import ActionSpec, Direction, Params, Result, from_host

__all__ = [
    "GET_RUN_AUDIT",
    "MAX_REPORTED_ENTRIES",
    "REPORT_RUN_AUDIT",
    "GetRunAuditParams",
    "ReportRunAuditParams",
    "ReportRunAuditResult",
    "RunAudit",
    "RunAuditEntry",
]

#: The most entries one ``report_run_audit`` call may carry.
MAX_REPORTED_ENTRIES = 256


class RunAuditEntry(Result):
    """One refusal the host did not see."""

    at: float
    kind: str = "call"
    origin: Literal["runtime", "sdk"] = "runtime"
    action: str | None = None
    resource: str | None = None
    code: str | None = None
    duration_ms: float | None = None
    detail: dict[str, Any] = Field(default_factory=dict[str, Any])


class GetRunAuditParams(Params):
    run_id: str


class RunAudit(Result):
    """The runtime's record of a run: ``known`` is false for a run it never saw (or
    has collected); ``live`` while its stream is open; ``dropped`` counts entries not
    kept (per-run and total bounds)."""

    run_id: str
    known: bool = False
    live: bool = False
    entries: list[RunAuditEntry] = Field(default_factory=list[RunAuditEntry])
    dropped: int = 0


class ReportRunAuditParams(Params):
    run_id: str
    entries: list[RunAuditEntry] = Field(
        default_factory=list[RunAuditEntry], max_length=MAX_REPORTED_ENTRIES
    )
    #: Refusals the worker did not keep (its own bound).
    dropped: int = Field(default=0, ge=0)


class ReportRunAuditResult(Result):
    accepted: int = 0


GET_RUN_AUDIT = from_host(
    "get_run_audit",
    GetRunAuditParams,
    RunAudit,
    timeout=10,
    doc="the refusals the runtime and the SDK made for a run (ours; optional)",
)
REPORT_RUN_AUDIT = ActionSpec(
    "report_run_audit",
    ReportRunAuditParams,
    ReportRunAuditResult,
    direction=Direction.PLUGIN_TO_RUNTIME,
    timeout=5,
    doc="the refusals the SDK made locally for one of the plugin's runs (ours; optional)",
)
