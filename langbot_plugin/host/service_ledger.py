"""The run-ledger actions of the service table: ``run_get``, ``run_list``,
``run_events_page``, ``run_cancel``.

A run sees its own record and those of runs of the same runner in the same
conversation, as the 4.11.2 host allows (else ``resource_not_granted``, ``kind:
run``); without a run only an ``agent_run:admin`` plugin sees every run. Paging keeps
the reference's exclusive cursors (by record ``id`` for ``run_list``, by result
``sequence`` for ``run_events_page``). ``run_cancel`` sets the run's
``cancel_requested``, and its driver closes the stream, which cancels the runner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langbot_plugin.api.entities.builtin.agent_runner.run_ledger import (
    AgentRun,
    RunEventPage,
    RunPage,
)
from langbot_plugin.host.errors import ResourceNotGrantedError
from langbot_plugin.host.paging import MAX_PAGE, parse_cursor
from langbot_plugin.host.registry import RunSession
from langbot_plugin.host.service_admin import AGENT_RUN_ADMIN
from langbot_plugin.protocol.host_api import run_ledger as rl
from langbot_plugin.rpc import RequestContext
from langbot_plugin.rpc.errors import InvalidParamsError

if TYPE_CHECKING:
    from langbot_plugin.host.services import RunServices

__all__ = ["run_cancel", "run_events_page", "run_get", "run_list", "visible"]


def visible(session: RunSession, target: RunSession) -> bool:
    """Whether ``session`` may read or cancel ``target``."""
    if target is session:
        return True
    mine, theirs = session.scope, target.scope
    return (
        target.runner_id == session.runner_id
        and target.plugin_identity == session.plugin_identity
        and mine.sees_conversation(theirs.conversation_id, theirs.thread_id)
        and mine.bot_id in (None, theirs.bot_id)
        and mine.workspace_id in (None, theirs.workspace_id)
    )


def _caller(
    services: RunServices, p: rl.RunTargetParams | rl.RunListParams, ctx: RequestContext, spec: Any
) -> RunSession | None:
    """The calling run, or ``None`` for an ``agent_run:admin`` plugin calling without
    one (any other plugin without a run is refused)."""
    if p.run_id is None and services.admins.allows(services.identify(ctx), AGENT_RUN_ADMIN):
        return None
    return services.session(p.run_id, ctx, spec)


def _target(
    services: RunServices, session: RunSession | None, target_run_id: str | None
) -> RunSession:
    if session is None:  # an admin: any run, named explicitly
        if not target_run_id:
            raise InvalidParamsError("target_run_id is required")
        return services.registry.require(target_run_id)
    target = services.registry.require(target_run_id or session.run_id)
    if not visible(session, target):
        raise ResourceNotGrantedError(
            f"Run {target.run_id} is not accessible by this run",
            details={"kind": "run", "resource": target.run_id, "run_id": session.run_id},
        )
    return target


def _limit(value: int) -> int:
    return max(1, min(value, MAX_PAGE))


async def run_get(services: RunServices, p: rl.RunTargetParams, ctx: RequestContext) -> AgentRun:
    session = _caller(services, p, ctx, rl.RUN_GET)
    return AgentRun.model_validate(_target(services, session, p.target_run_id).record())


async def run_list(services: RunServices, p: rl.RunListParams, ctx: RequestContext) -> RunPage:
    session = _caller(services, p, ctx, rl.RUN_LIST)
    if session is not None:
        services.conversation(session, p.conversation_id)
    before = parse_cursor(p.before_cursor, "before_cursor")
    statuses = set(p.statuses or [])
    runs = sorted(
        (
            s
            for s in services.registry
            if (
                visible(session, s)
                if session is not None
                else p.conversation_id in (None, s.scope.conversation_id)
            )
            and (not statuses or s.status in statuses)
        ),
        key=lambda s: s.ledger_id,
        reverse=True,
    )
    total = len(runs)
    if before is not None:
        runs = [s for s in runs if s.ledger_id < before]
    limit = _limit(p.limit)
    page, has_more = runs[:limit], len(runs) > limit
    return RunPage.model_validate(
        {
            "items": [s.record() for s in page],
            "next_cursor": str(page[-1].ledger_id) if has_more else None,
            "prev_cursor": None,
            "has_more": has_more,
            "total_count": total,
        }
    )


async def run_events_page(
    services: RunServices, p: rl.RunEventsPageParams, ctx: RequestContext
) -> RunEventPage:
    session = _caller(services, p, ctx, rl.RUN_EVENTS_PAGE)
    target = _target(services, session, p.target_run_id)
    if p.direction not in ("forward", "backward"):
        raise InvalidParamsError("direction must be 'forward' or 'backward'")
    before = parse_cursor(p.before_cursor, "before_cursor")
    after = parse_cursor(p.after_cursor, "after_cursor")
    events = sorted(
        (
            e
            for e in target.events
            if (before is None or e["sequence"] < before)
            and (after is None or e["sequence"] > after)
        ),
        key=lambda e: e["sequence"],
        reverse=p.direction == "backward",
    )
    limit = _limit(p.limit)
    page, has_more = events[:limit], len(events) > limit
    return RunEventPage.model_validate(
        {
            "items": page,
            "next_cursor": str(page[-1]["sequence"]) if page and has_more else None,
            "prev_cursor": str(page[0]["sequence"]) if page else None,
            "has_more": has_more,
        }
    )


async def run_cancel(services: RunServices, p: rl.RunCancelParams, ctx: RequestContext) -> AgentRun:
    session = _caller(services, p, ctx, rl.RUN_CANCEL)
    target = _target(services, session, p.target_run_id)
    reason = p.status_reason or p.reason
    return AgentRun.model_validate(services.registry.request_cancel(target.run_id, reason).record())
