"""Live agent runs, and the grants a run-scoped call is checked against.

The runtime opens a :class:`LiveRun` when it forwards ``run_runner`` to a plugin and
closes it when the stream ends. A plugin call carrying a ``run_id`` is refused before
it reaches the host (:mod:`langbot_plugin.protocol.errors`) unless the run is live, the
caller's, and the call within the run's grants; a run-only action
(:data:`~langbot_plugin.protocol.run_needs.RUN_ONLY`) without ``run_id`` is refused
``run_not_live``, any other passes as a plugin-level call. Refusals go to the run's
audit (:mod:`langbot_plugin.runtime.run_audit`). A resource granted with empty
``operations`` gets its kind's default operations, as the released host reads it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langbot_plugin.api.entities.builtin.agent_runner.operations import effective_operations
from langbot_plugin.protocol.errors import (
    ApiNotAvailableError,
    ResourceNotGrantedError,
    RunDeadlineError,
    RunNotLiveError,
    RunNotOwnedError,
)
from langbot_plugin.protocol.run_needs import (
    NEEDS,
    RUN_ONLY,
    STORAGE_AREAS,
    ApiNeed,
    Need,
    StorageNeed,
)
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.rpc.errors import PermissionDeniedError
from langbot_plugin.runtime.run_audit import RunAudits

__all__ = [
    "ApiNotAvailableError",
    "LiveRun",
    "LiveRuns",
    "ResourceNotGrantedError",
    "RunDeadlineError",
    "RunNotLiveError",
    "RunNotOwnedError",
]


logger = logging.getLogger("langbot_plugin.runtime.runs")

Grants = dict[str, frozenset[str]]


def _grants(entries: Any, kind: str, id_key: str) -> Grants:
    grants: Grants = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get(id_key), str):
            ops = entry.get("operations")
            grants[entry[id_key]] = effective_operations(
                kind, ops if isinstance(ops, list) else None
            )
    return grants


@dataclass
class LiveRun:
    run_id: str
    identity: str
    deadline: float | None
    models: Grants = field(default_factory=dict[str, frozenset[str]])
    tools: Grants = field(default_factory=dict[str, frozenset[str]])
    knowledge_bases: Grants = field(default_factory=dict[str, frozenset[str]])
    storage: frozenset[str] = frozenset()
    apis: frozenset[str] = frozenset()

    @classmethod
    def from_context(cls, run_id: str, identity: str, context: dict[str, Any]) -> LiveRun:
        resources = context.get("resources")
        resources = resources if isinstance(resources, dict) else {}
        access = context.get("context")
        apis = access.get("available_apis") if isinstance(access, dict) else None
        apis = apis if isinstance(apis, dict) else {}
        runtime = context.get("runtime")
        deadline = runtime.get("deadline_at") if isinstance(runtime, dict) else None
        storage = resources.get("storage")
        storage = storage if isinstance(storage, dict) else {}
        return cls(
            run_id=run_id,
            identity=identity,
            deadline=float(deadline) if isinstance(deadline, int | float) else None,
            models=_grants(resources.get("models"), "model", "model_id"),
            tools=_grants(resources.get("tools"), "tool", "tool_name"),
            knowledge_bases=_grants(resources.get("knowledge_bases"), "knowledge_base", "kb_id"),
            storage=frozenset(
                area for area in STORAGE_AREAS if storage.get(f"{area}_storage") is True
            ),
            apis=frozenset(k for k, v in apis.items() if v is True),
        )

    def require(self, kind: str, grants: Grants, resource: object, operation: str) -> None:
        if not isinstance(resource, str) or operation not in grants.get(resource, frozenset()):
            raise ResourceNotGrantedError(
                f"{kind} {resource!r} is not granted for {operation} in run {self.run_id}",
                details={"kind": kind, "resource": resource, "operation": operation},
            )

    def require_api(self, api: str) -> None:
        if api not in self.apis:
            raise ApiNotAvailableError(
                f"{api} is not available to run {self.run_id}", details={"api": api}
            )

    def require_storage(self, kind: str) -> None:
        if kind not in self.storage:
            raise ResourceNotGrantedError(
                f"{kind} storage is not granted to run {self.run_id}",
                details={"kind": "storage", "resource": kind},
            )


Check = Callable[[LiveRun, dict[str, Any]], None]


#: How each resource kind is named in refusals, and where a run keeps its grants.
_RESOURCES: dict[str, tuple[str, Callable[[LiveRun], Grants]]] = {
    "model": ("model", lambda run: run.models),
    "tool": ("tool", lambda run: run.tools),
    "knowledge_base": ("knowledge base", lambda run: run.knowledge_bases),
}


def _check(need: Need) -> Check:
    if isinstance(need, ApiNeed):
        return lambda run, _: run.require_api(need.api)
    if isinstance(need, StorageNeed):
        return lambda run, _: run.require_storage(need.area)
    label, grants_of = _RESOURCES[need.kind]

    def check(run: LiveRun, data: dict[str, Any]) -> None:
        if need.applies(data):
            run.require(label, grants_of(run), data.get(need.field), need.operation)

    return check


#: What each run-scoped action needs from the run's grants (declared in
#: :data:`~langbot_plugin.protocol.run_needs.NEEDS`).
CHECKS: dict[str, Check] = {action: _check(need) for action, need in NEEDS.items()}


class LiveRuns:
    """The runs currently streaming through this runtime, and their audit."""

    def __init__(self, audit: RunAudits | None = None) -> None:
        self._runs: dict[str, LiveRun] = {}
        #: The refusals made for each run (kept after it ends, until collected).
        self.audit = audit if audit is not None else RunAudits()

    def __contains__(self, run_id: str) -> bool:
        return run_id in self._runs

    def __len__(self) -> int:
        return len(self._runs)

    def open(self, run: LiveRun, scope: ActionScope | None = None) -> None:
        """``run`` streams from now on; the workspace of ``scope`` (its ``run_runner``'s)
        owns its audit."""
        self._runs[run.run_id] = run
        self.audit.open(run.run_id, run.identity, scope)

    def close(self, run_id: str) -> None:
        if self._runs.pop(run_id, None) is not None:
            self.audit.close(run_id)

    def authorize(self, action: str, data: dict[str, Any], identity: str) -> None:
        """Refuse a call carrying ``run_id`` that is not live, not the caller's, or not
        granted, and a run-only action without ``run_id``. A plugin-level action without
        ``run_id`` passes: it is what any plugin may call. Each refusal is logged (the
        host never sees it) and kept in the run's audit (:attr:`audit`)."""
        try:
            self._authorize(action, data, identity)
        except PermissionDeniedError as exc:
            self.audit.refused(action, data, identity, exc)
            logger.warning(
                "refused %s of %s for run %r: %s %s",
                action,
                identity,
                data.get("run_id"),
                exc.code,
                exc.message,
            )
            raise

    def _authorize(self, action: str, data: dict[str, Any], identity: str) -> None:
        run_id = data.get("run_id")
        if run_id is None:
            if action in RUN_ONLY:
                raise RunNotLiveError(
                    f"{action} exists only for runs: name a live run of this plugin",
                    details={"action": action, "run_id": None},
                )
            return
        run = self._runs.get(run_id) if isinstance(run_id, str) else None
        if run is None:
            raise RunNotLiveError(f"run {run_id!r} is not live", details={"run_id": run_id})
        if run.identity != identity:
            raise RunNotOwnedError(
                f"run {run_id} belongs to another plugin", details={"run_id": run_id}
            )
        if run.deadline is not None and time.time() > run.deadline:
            raise RunDeadlineError(f"run {run_id} passed its deadline", details={"run_id": run_id})
        check = CHECKS.get(action)
        if check is not None:
            check(run, data)
