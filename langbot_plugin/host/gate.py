"""Run authorization in front of the host's own actions (models, tools, storage ...).

:class:`GatedDispatcher` answers the run-only actions from the
:class:`~langbot_plugin.host.services.RunServices` table and forwards everything
else to an inner dispatcher (for example :class:`~langbot_plugin.host.LocalHost`).
An inner action whose payload carries a ``run_id`` is served only when the run is
live and the caller's, and when the resource named in the payload is granted
for the operation in :data:`CHECKS`; without ``run_id`` it passes unchanged (a
plain plugin call, as on the 4.11.2 host). With ``strict=False`` a ``run_id`` the
registry has never seen passes unchecked too (a development host that did not start
the run itself); runs it knows are always enforced. The inner route decides the answer shape
(``call_tool`` answers ``{result}`` with ``run_id`` and ``{tool_response}``
without, as the 4.11.2 host does).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langbot_plugin.host.registry import RunSession
from langbot_plugin.protocol.host_api import models, storage
from langbot_plugin.protocol.run_needs import NEEDS, ApiNeed, Need, StorageNeed
from langbot_plugin.rpc import Dispatcher, RequestContext, Route
from langbot_plugin.rpc.errors import InvalidParamsError
from langbot_plugin.rpc.routes import preceded_by

if TYPE_CHECKING:
    from langbot_plugin.host.services import RunServices

__all__ = ["CHECKS", "GatedDispatcher"]

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


class GatedDispatcher:
    """The run-only table first, then the inner dispatcher behind run authorization."""

    def __init__(
        self, services: RunServices, inner: Dispatcher | None, *, strict: bool = True
    ) -> None:
        self.services = services
        self.inner = inner
        self.strict = strict

    def authorize(self, ctx: RequestContext) -> RunSession | None:
        """Check a call of an inner action; ``None`` when it carries no ``run_id``."""
        run_id = ctx.data.get("run_id")
        if run_id is None or (not self.strict and run_id not in self.services.registry):
            return None
        session = self.services.session(run_id, ctx)
        check = CHECKS.get(ctx.request.action)
        if check is not None:
            check(session, ctx.data)
        return session

    def resolve(self, action: str) -> Route | None:
        own = self.services.resolve(action)
        if own is not None:
            return own
        route = self.inner.resolve(action) if self.inner is not None else None
        if route is None:
            return None
        return preceded_by(route, self.authorize)
