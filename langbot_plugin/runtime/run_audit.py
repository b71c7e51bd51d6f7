"""The runtime's audit of each run: the refusals it made, and those the SDK reported.

Neither kind reaches the host, so both are kept here per run (bounded, redacted,
append-only, scoped to the run's workspace, kept a while after the run ends) until the
host asks (``get_run_audit``, :mod:`langbot_plugin.protocol.run_audit`). A refusal that
names none of the caller's runs goes to every live run of that plugin, marked
``detail.attributed: "plugin"`` (docs/security.md).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from langbot_plugin.protocol.errors import RunNotLiveError, RunNotOwnedError
from langbot_plugin.protocol.run_audit import RunAudit, RunAuditEntry
from langbot_plugin.protocol.run_needs import named_resource
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.rpc.errors import RPCError
from langbot_plugin.rpc.redaction import redact, redact_data

__all__ = ["MAX_ENTRIES", "MAX_ENTRIES_PER_RUN", "RETAINED_RUNS", "RunAudits"]

MAX_ENTRIES_PER_RUN = 256
MAX_ENTRIES = 16384
#: Ended runs whose record is kept for the host to ask.
RETAINED_RUNS = 512


_UNSCOPED = ActionScope()


@dataclass(eq=False)
class _Record:
    identity: str
    scope: ActionScope = _UNSCOPED
    entries: list[RunAuditEntry] = field(default_factory=list[RunAuditEntry])
    dropped: int = 0
    live: bool = True


def _text(value: object) -> str | None:
    return None if value is None else redact(str(value))


class RunAudits:
    """Per-run refusal records (see the module docstring)."""

    def __init__(
        self,
        *,
        per_run: int = MAX_ENTRIES_PER_RUN,
        total: int = MAX_ENTRIES,
        retain: int = RETAINED_RUNS,
    ) -> None:
        self.per_run = per_run
        self.total = total
        self.retain = retain
        self._records: dict[str, _Record] = {}
        self._live: dict[str, dict[str, _Record]] = {}  # identity -> run id -> record
        self._ended: OrderedDict[str, None] = OrderedDict()
        self._kept = 0

    @property
    def kept(self) -> int:
        """Entries held across every record."""
        return self._kept

    def __contains__(self, run_id: str) -> bool:
        return run_id in self._records

    # ------------------------------------------------------------------ lifetime

    def open(self, run_id: str, identity: str, scope: ActionScope | None = None) -> None:
        """A run of ``identity``, started in ``scope``, streams (a reused id starts a
        new record)."""
        self._collect(run_id)
        record = _Record(identity, scope or _UNSCOPED)
        self._records[run_id] = record
        self._live.setdefault(identity, {})[run_id] = record

    def close(self, run_id: str) -> None:
        """The run's stream ended; its record is kept until ``retain`` newer runs end."""
        record = self._records.get(run_id)
        if record is None or not record.live:
            return
        record.live = False
        self._unlist(run_id, record)
        self._ended[run_id] = None
        while len(self._ended) > self.retain:
            oldest, _ = self._ended.popitem(last=False)
            self._collect(oldest)

    def _unlist(self, run_id: str, record: _Record) -> None:
        live = self._live.get(record.identity)
        if live is not None:
            live.pop(run_id, None)
            if not live:
                del self._live[record.identity]

    def _collect(self, run_id: str) -> None:
        record = self._records.pop(run_id, None)
        if record is None:
            return
        self._kept -= len(record.entries)
        self._ended.pop(run_id, None)
        if record.live:
            self._unlist(run_id, record)

    # ------------------------------------------------------------------ entries

    def _full(self, record: _Record) -> bool:
        return len(record.entries) >= self.per_run or self._kept >= self.total

    def _add(self, record: _Record, entry: RunAuditEntry) -> bool:
        if self._full(record):
            record.dropped += 1
            return False
        record.entries.append(entry)
        self._kept += 1
        return True

    def refused(self, action: str, data: dict[str, Any], identity: str, exc: RPCError) -> int:
        """Keep the runtime's refusal of ``identity``'s call; returns the runs it went to."""
        named = data.get("run_id")
        own = self._records.get(named) if isinstance(named, str) else None
        if own is not None and own.identity == identity:
            targets = [own]
            detail: dict[str, Any] = {}
        else:
            targets = list(self._live.get(identity, {}).values())
            detail = {"named_run": _text(named), "attributed": "plugin"}
        if not targets:
            return 0
        if all(self._full(record) for record in targets):  # counted, not built
            for record in targets:
                record.dropped += 1
            return len(targets)
        detail["error"] = redact(exc.message)
        entry = RunAuditEntry.model_construct(
            at=time.time(),
            kind="call",
            duration_ms=None,
            origin="runtime",
            action=action,
            resource=_text(named_resource(action, data)),
            code=exc.code,
            detail=detail,
        )
        for record in targets:
            self._add(record, entry)
        return len(targets)

    def reported(
        self, run_id: str, identity: str, entries: list[RunAuditEntry], dropped: int = 0
    ) -> int:
        """Keep the SDK's refusals ``identity`` reported for its run ``run_id``; returns
        how many were kept. A run that is not the caller's is refused."""
        record = self._records.get(run_id)
        if record is None:
            raise RunNotLiveError(f"run {run_id!r} is not known", details={"run_id": run_id})
        if record.identity != identity:
            raise RunNotOwnedError(
                f"run {run_id} belongs to another plugin", details={"run_id": run_id}
            )
        record.dropped += dropped
        kept = 0
        for entry in entries:
            if self._full(record):
                record.dropped += 1
                continue
            clean = RunAuditEntry.model_construct(
                at=entry.at,
                kind=entry.kind,
                origin="sdk",
                action=_text(entry.action),
                resource=_text(entry.resource),
                code=_text(entry.code),
                duration_ms=entry.duration_ms,
                detail=redact_data(entry.detail),
            )
            kept += self._add(record, clean)
        return kept

    def read(self, run_id: str, scope: ActionScope | None = None) -> RunAudit:
        """What is kept for ``run_id`` (``known=False`` if nothing is, or if the run
        belongs to a workspace other than the one of the asker's ``scope``)."""
        record = self._records.get(run_id)
        if record is None or not (scope or _UNSCOPED).shares_workspace_with(record.scope):
            return RunAudit(run_id=run_id)
        return RunAudit(
            run_id=run_id,
            known=True,
            live=record.live,
            entries=list(record.entries),
            dropped=record.dropped,
        )
