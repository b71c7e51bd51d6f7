"""The reference's Box server names: faces over :mod:`box_runtime.service` and ``.server``.

:class:`BoxServerHandler` serves the routes of one :class:`box_runtime.service.BoxService`
over one connection (without ``host_control_authenticated`` every action is refused);
:class:`BoxGenerationFence` is the placement generation last seen per workspace, shared
by the handlers and apps given the same fence; :func:`create_app` /
:func:`create_ws_relay_app` are the Box's aiohttp app over the face's runtime.
``allow_host_backend`` is accepted for the reference's signature; the Box's own host
policy decides about the unsandboxed backend.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from box_runtime.server import ServerOptions, check_options, make_app
from box_runtime.service import BoxService
from langbot_plugin.box.runtime import BoxRuntime
from langbot_plugin.entities.io.context import ActionContext
from langbot_plugin.rpc import PermissionDeniedError, RequestContext, Route
from langbot_plugin.rpc.routes import Dispatcher
from langbot_plugin.rpc.transport_aiohttp import aiohttp_transport
from langbot_plugin.runtime.io.connection import Connection, TransportConnection
from langbot_plugin.runtime.io.handler import Handler

__all__ = [
    "AiohttpWSConnection",
    "BoxGenerationFence",
    "BoxServerHandler",
    "create_app",
    "create_ws_relay_app",
]


class BoxGenerationFence:
    """The placement generation last seen per ``(instance, workspace)``; it only moves forward.

    The Box's service keeps it (a newer generation retires the older one's sessions, an
    older one is refused); this object is what several handlers and apps share.
    """

    def __init__(self, *, max_records: int = 100_000) -> None:
        del max_records  # the Box bounds workspaces with box.limits.max_admission_records
        self.generations: dict[tuple[str, str], int] = {}

    def current(self, action_context: ActionContext | dict[str, Any]) -> int | None:
        context = ActionContext.model_validate(action_context)
        return self.generations.get((context.instance_uuid, context.workspace_uuid))

    def require_current(self, action_context: ActionContext | dict[str, Any]) -> None:
        context = ActionContext.model_validate(action_context)
        if self.current(context) != context.placement_generation:
            raise PermissionDeniedError("Stale Box placement generation")


async def _refuse(ctx: RequestContext) -> dict[str, Any]:
    del ctx
    raise PermissionDeniedError("Box host control authentication is required")


_REFUSED = Route(_refuse)


class _Refused:
    """The dispatcher of a connection that is not the authenticated host: one route,
    built once, refuses every action."""

    def resolve(self, action: str) -> Route | None:
        del action
        return _REFUSED


class BoxServerHandler(Handler):
    """Serves the Box actions of ``runtime`` over one connection."""

    name = "BoxServerHandler"

    def __init__(
        self,
        connection: Connection,
        runtime: BoxRuntime,
        *,
        host_control_authenticated: bool,
        trusted_instance_uuid: str,
        allow_host_backend: bool = False,
        generation_fence: BoxGenerationFence | None = None,
    ) -> None:
        del allow_host_backend
        super().__init__(connection, max_file_bytes=runtime.max_rpc_file_bytes)
        self.runtime = runtime
        self.generation_fence = generation_fence or BoxGenerationFence()
        self.service = BoxService(runtime.core, generations=self.generation_fence.generations)
        self._authenticated = bool(host_control_authenticated)
        self._trusted_instance = trusted_instance_uuid.strip() or None

    def dispatcher(self) -> Dispatcher:
        return self.service.dispatcher if self._authenticated else _Refused()

    async def run(self) -> None:
        session = self.session
        self.service.attach(session, self._trusted_instance)
        try:
            await super().run()
        finally:
            self.service.detach(session)


class AiohttpWSConnection(TransportConnection):
    """A :class:`Connection` over a prepared aiohttp ``WebSocketResponse``."""

    def __init__(self, ws: web.WebSocketResponse) -> None:
        super().__init__(aiohttp_transport(ws))


def create_app(
    runtime: BoxRuntime,
    *,
    control_token: str | None = None,
    trusted_instance_uuid: str | None = None,
    generation_fence: BoxGenerationFence | None = None,
) -> web.Application:
    """The Box's one-port app over ``runtime`` (RPC, probes, managed-process relay)."""
    options = ServerOptions.from_environ(
        token=control_token or None, trusted_instance=trusted_instance_uuid or ""
    )
    check_options(options)
    fence = generation_fence or BoxGenerationFence()
    return make_app(BoxService(runtime.core, generations=fence.generations), options)


#: The reference keeps this name for older callers: the same app.
create_ws_relay_app = create_app
