"""Run authorization in front of the host's own actions (models, tools, storage ...).

:func:`gated` answers the run-only actions from the
:class:`~langbot_plugin.host.services.RunServices` table and mounts an inner dispatcher
behind :func:`run_gate`: an inner call carrying a ``run_id`` is served only when the run
is live and the caller's and the named resource is granted (:data:`CHECKS`); without
``run_id`` a run-only action is refused ``run_not_live`` and any other passes as a
plugin-level call, as on the 4.11.2 host. ``strict=False`` lets a ``run_id`` the
registry never saw pass. :func:`run_audit` writes every call naming a known run to its
audit. The table composes both middlewares once per action.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langbot_plugin.host.registry import RunSession
from langbot_plugin.host.services import not_a_run
from langbot_plugin.protocol.host_api import models, storage
from langbot_plugin.protocol.run_needs import (
    NEEDS,
    RUN_ONLY,
    ApiNeed,
    Need,
    StorageNeed,
    named_resource,
)
from langbot_plugin.protocol.table import ActionTable
from langbot_plugin.rpc import Dispatcher, RequestContext
from langbot_plugin.rpc.errors import InvalidParamsError, RPCError
from langbot_plugin.rpc.routes import Answer, CallNext, Middleware, before, when_done

if TYPE_CHECKING:
    from langbot_plugin.host.services import RunServices

__all__ = ["CHECKS", "gated", "run_audit", "run_gate"]

Check = Callable[[RunSession, dict[str, Any]], None]


def _check(need: Need) -> Check:
    if isinstance(need, ApiNeed):
        return lambda session, _data: session.grants.require_api(need.api, session.run_id)
    if isinstance(need, StorageNeed):
        return lambda session, _data: session.grants.require_storage(need.area, session.run_id)

    def check(session: RunSession, data: dict[str, Any]) -> None:
        if need.applies(data):
            session.grants.require_resource(
                need.kind, data.get(need.field), need.operation, session.run_id
            )

    return check


_TOOL_GRANT = _check(NEEDS[models.CALL_TOOL.name])


def _tool_call(session: RunSession, data: dict[str, Any]) -> None:
    _TOOL_GRANT(session, data)
    if "parameters" not in data:
        raise InvalidParamsError("parameters is required for Runner tool calls")


def _storage(session: RunSession, data: dict[str, Any]) -> None:
    owner = data.get("owner_type")
    if owner not in ("plugin", "workspace"):
        raise InvalidParamsError("owner_type must be 'plugin' or 'workspace'")
    session.grants.require_storage(str(owner), session.run_id)


#: What a run-scoped call of each inner action needs from the run's grants: the shared
#: :data:`~langbot_plugin.protocol.run_needs.NEEDS`, plus the host's binary storage.
CHECKS: dict[str, Check] = {
    **{action: _check(need) for action, need in NEEDS.items()},
    models.CALL_TOOL.name: _tool_call,
    **{spec.name: _storage for spec in storage.BINARY_STORAGE},
}


def run_gate(services: RunServices, *, strict: bool = True) -> Middleware:
    """The middleware that checks a call of an inner action against its run (see the
    module doc); ``strict=False`` lets a ``run_id`` the registry never saw pass."""

    def authorize(ctx: RequestContext) -> None:
        run_id = ctx.data.get("run_id")
        if run_id is None:
            if ctx.request.action in RUN_ONLY:
                raise not_a_run(ctx)
            return
        if not strict and run_id not in services.registry:
            return
        session = services.session(run_id, ctx)
        check = CHECKS.get(ctx.request.action)
        if check is not None:
            check(session, ctx.data)

    return before(authorize)


def gated(services: RunServices, inner: Dispatcher | None, *, strict: bool = True) -> ActionTable:
    """The run-only table first, then ``inner`` behind :func:`run_gate`; every call
    that names a known run audited (:func:`run_audit`) when the services keep an audit."""
    table = ActionTable()
    table.mount(services.table)
    if inner is not None:
        table.mount(inner, run_gate(services, strict=strict))
    if services.audit is not None:
        table.use(run_audit(services))
    return table


def _grant_of(action: str, data: dict[str, Any]) -> tuple[object, str]:
    """The resource a call names and the grant that covers it."""
    need = NEEDS.get(action)
    if isinstance(need, ApiNeed):
        return named_resource(action, data), f"api:{need.api}"
    if isinstance(need, StorageNeed):
        return need.area, f"storage:{need.area}"
    if need is not None:
        return named_resource(action, data), f"{need.kind}:{need.operation}"
    if action in storage_names:
        return data.get("owner_type"), f"storage:{data.get('owner_type')}"
    return None, "run"


storage_names = frozenset(spec.name for spec in storage.BINARY_STORAGE)


def run_audit(services: RunServices) -> Middleware:
    """The middleware that writes every call naming a known run to that run's audit:
    the resource, the grant that allowed it or the refusal code, and how long it took."""
    audit = services.audit
    assert audit is not None

    def note(ctx: RequestContext, started: float, error: Exception | None) -> None:
        if error is not None and not isinstance(error, RPCError):
            return  # not a refusal: nothing the audit can name
        run_id = ctx.data.get("run_id")
        if not isinstance(run_id, str) or run_id not in services.registry:
            return  # only known runs have an audit (no entries for made-up ids)
        action = ctx.request.action
        resource, grant = _grant_of(action, ctx.data)
        code = error.code if error is not None else None
        audit.record(
            run_id,
            "call",
            action=action,
            resource=resource,
            grant=None if code else grant,
            code=code,
            duration_ms=(time.perf_counter() - started) * 1000,
        )

    async def spill() -> None:
        """Write the pending entries once there are many, not only when a run ends:
        long runs (and many at once) keep at most that many in memory."""
        if audit.should_flush():
            await audit.flush()

    async def audited(ctx: RequestContext, call_next: CallNext) -> Answer:
        started = time.perf_counter()
        try:
            answer = await call_next(ctx)
        except RPCError as exc:
            note(ctx, started, exc)
            await spill()
            raise
        answer = when_done(answer, lambda error: note(ctx, started, error))
        await spill()
        return answer

    return audited
