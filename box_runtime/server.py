"""``lbp box``: the aiohttp server (one port) and the stdio mode the host spawns.

One port serves ``/rpc/ws`` (the action RPC), ``/healthz``, ``/readyz``, ``/metrics``
(:mod:`box_runtime.metrics`) and the managed-process relay (:mod:`box_runtime.relay`);
in stdio mode (``-s``) the RPC runs over stdin/stdout and the port serves the rest.
The routes, the control token, instance binding and the startup refusals are in
docs/box.md, *Running it*; SIGTERM and SIGINT remove every non-persistent session
before the process exits.
"""

from __future__ import annotations

import hmac
import logging
import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass

import anyio
from aiohttp import WSCloseCode, web
from anyio.abc import TaskStatus

from box_runtime.backends.host_policy import check_host_backend
from box_runtime.errors import (
    BoxHostBackendRefusedError,
    BoxManagedProcessConflictError,
    BoxManagedProcessNotFoundError,
    BoxSessionConflictError,
    BoxSessionNotFoundError,
    BoxValidationError,
)
from box_runtime.link_names import (
    CONTROL_TOKEN_ENV,
    CONTROL_TOKEN_HEADER,
    GENERATION_HEADER,
    INSTANCE_HEADER,
    INSTANCE_ID_PATTERN,
    TRUSTED_INSTANCE_ENV,
    WORKSPACE_HEADER,
)
from box_runtime.process_models import DEFAULT_PROCESS_ID
from box_runtime.runtime import BoxRuntime
from box_runtime.service import BoxService
from langbot_plugin.rpc import PermissionDeniedError, RPCError, RPCSession
from langbot_plugin.rpc.loopback import is_loopback
from langbot_plugin.rpc.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from langbot_plugin.rpc.tokens import check_token, page_refusal
from langbot_plugin.rpc.transport_aiohttp import aiohttp_transport, websocket_response

__all__ = [
    "CONTROL_TOKEN_ENV",
    "CONTROL_TOKEN_HEADER",
    "INSTANCE_HEADER",
    "TRUSTED_INSTANCE_ENV",
    "ServerOptions",
    "StartupError",
    "is_loopback",
    "make_app",
    "serve",
]

logger = logging.getLogger("box_runtime.server")


class StartupError(Exception):
    """The server refuses to start with these options (message says why)."""


@dataclass(frozen=True, slots=True)
class ServerOptions:
    """How the process serves: ``lbp box``'s flags and the environment's secrets.

    The configuration of the sandboxes is the runtime's
    (:class:`~box_runtime.settings.Settings`); :func:`serve` tells it ``host``.
    """

    host: str = "127.0.0.1"
    port: int = 5410
    stdio: bool = False
    token: str = ""
    trusted_instance: str | None = None

    @classmethod
    def from_environ(
        cls,
        host: str = "127.0.0.1",
        port: int = 5410,
        stdio: bool = False,
        *,
        token: str | None = None,
        trusted_instance: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> ServerOptions:
        """The options with the token (``LANGBOT_BOX_CONTROL_TOKEN``) and the trusted
        instance (``LANGBOT_BOX_TRUSTED_INSTANCE_UUID``) of the environment, unless given
        (``""``: none)."""
        env = os.environ if environ is None else environ
        token = env.get(CONTROL_TOKEN_ENV, "") if token is None else token
        trusted = (
            env.get(TRUSTED_INSTANCE_ENV, "") if trusted_instance is None else trusted_instance
        )
        return cls(host, port, stdio, token.strip(), trusted.strip() or None)


def check_options(options: ServerOptions) -> None:
    token = options.token
    if token:
        try:
            check_token(token, name=CONTROL_TOKEN_ENV)
        except ValueError as exc:
            raise StartupError(str(exc)) from None
    if not token and not is_loopback(options.host):
        raise StartupError(
            f"refusing to listen on {options.host} without a control token: set "
            f"{CONTROL_TOKEN_ENV} (shared with the host), or bind 127.0.0.1"
        )
    trusted = options.trusted_instance
    if trusted is not None and not INSTANCE_ID_PATTERN.fullmatch(trusted):
        raise StartupError(f"{TRUSTED_INSTANCE_ENV} is not a valid LangBot instance id")


class _Gate:
    """Token and instance checks shared by the routes."""

    def __init__(self, options: ServerOptions) -> None:
        self.token = options.token
        self.trusted_instance = options.trusted_instance

    def token_ok(self, request: web.Request) -> bool:
        if not self.token:
            return True
        supplied = request.headers.get(CONTROL_TOKEN_HEADER, "")
        return hmac.compare_digest(supplied.encode(), self.token.encode())

    def page_refusal(self, request: web.Request) -> str | None:
        """Why ``/metrics`` is refused (the rule of ``lbp rt``'s ``/status``), or ``None``."""
        return page_refusal(
            request.path,
            token=self.token,
            presented=request.headers.get(CONTROL_TOKEN_HEADER, ""),
            peer=request.remote or "",
            header=CONTROL_TOKEN_HEADER,
        )

    def instance(self, request: web.Request, *, bind: bool = True) -> tuple[bool, str | None]:
        """(allowed, instance id) of a connection; a control connection (``bind``) pins
        the first instance seen, a relay connection never does."""
        header = request.headers.get(INSTANCE_HEADER)
        if header is not None:
            header = header.strip()
            if not INSTANCE_ID_PATTERN.fullmatch(header):
                return False, None
        if self.trusted_instance is None:
            if bind and header is not None:
                self.trusted_instance = header
                logger.info("Box: bound to LangBot instance %s", header)
            return True, header
        if header is None or not hmac.compare_digest(header, self.trusted_instance):
            return False, None
        return True, header


_SERVICE = web.AppKey("service", BoxService)
_GATE = web.AppKey("gate", _Gate)
_SOCKETS = web.AppKey("sockets", set[web.WebSocketResponse])


def _deny(reason: str, status: int = 401) -> web.Response:
    return web.json_response(
        {"error": {"code": "unauthenticated", "message": reason}}, status=status
    )


async def _rpc_ws(request: web.Request) -> web.StreamResponse:
    gate = request.app[_GATE]
    if not gate.token_ok(request):
        return _deny(f"missing or wrong {CONTROL_TOKEN_HEADER}")
    allowed, instance = gate.instance(request)
    if not allowed:
        return _deny(f"{INSTANCE_HEADER} is missing, malformed or names another instance")
    service = request.app[_SERVICE]
    ws = websocket_response()
    await ws.prepare(request)
    sockets = request.app[_SOCKETS]
    sockets.add(ws)
    session = RPCSession(aiohttp_transport(ws), service.dispatcher, name="box")
    service.attach(session, instance)
    try:
        await session.serve()
    finally:
        service.detach(session)
        sockets.discard(ws)
    return ws


async def _healthz(request: web.Request) -> web.Response:
    service = request.app[_SERVICE]
    return web.json_response(
        {
            "live": True,
            "sessions": service.runtime.count(),
            "connections": service.connections,
            "initialized": service.runtime.initialized.is_set(),
        }
    )


async def _metrics(request: web.Request) -> web.Response:
    why = request.app[_GATE].page_refusal(request)
    if why is not None:
        return _deny(why)
    body = request.app[_SERVICE].metrics.text()
    return web.Response(body=body, headers={"Content-Type": METRICS_CONTENT_TYPE})


async def _readyz(request: web.Request) -> web.Response:
    if not request.app[_GATE].token_ok(request):
        return _deny(f"missing or wrong {CONTROL_TOKEN_HEADER}")
    info = await request.app[_SERVICE].runtime.backend_info()
    body = {"ready": info.available, "backend": info.model_dump(mode="json")}
    return web.json_response(body, status=200 if info.available else 503)


#: HTTP status of a relay request the Box refuses before the WebSocket handshake.
_RELAY_STATUS: tuple[tuple[type[RPCError], int], ...] = (
    (BoxSessionNotFoundError, 404),
    (BoxManagedProcessNotFoundError, 404),
    (BoxManagedProcessConflictError, 409),
    (BoxSessionConflictError, 409),
    (PermissionDeniedError, 403),
    (BoxValidationError, 400),
)


async def _managed_process_ws(request: web.Request) -> web.StreamResponse:
    from box_runtime.relay import relay_response, serve_relay

    gate = request.app[_GATE]
    if not gate.token_ok(request):
        return _deny(f"missing or wrong {CONTROL_TOKEN_HEADER}")
    allowed, instance = gate.instance(request, bind=False)
    if not allowed:
        return _deny(f"{INSTANCE_HEADER} is missing, malformed or names another instance")
    service = request.app[_SERVICE]
    try:
        process = service.relay_process(
            instance=instance,
            workspace=request.headers.get(WORKSPACE_HEADER),
            generation=request.headers.get(GENERATION_HEADER),
            session_id=request.match_info["session_id"],
            process_id=request.match_info.get("process_id", DEFAULT_PROCESS_ID),
        )
    except RPCError as exc:
        status = next((code for cls, code in _RELAY_STATUS if isinstance(exc, cls)), 400)
        return web.json_response(
            {"error": {"code": exc.code, "message": exc.message}}, status=status
        )
    ws = relay_response()
    await ws.prepare(request)
    sockets = request.app[_SOCKETS]
    sockets.add(ws)
    try:
        await serve_relay(ws, process, service.metrics.relay_frame)
    finally:
        sockets.discard(ws)
    return ws


async def _close_sockets(app: web.Application) -> None:
    for ws in list(app[_SOCKETS]):
        await ws.close(code=WSCloseCode.GOING_AWAY, message=b"Box runtime shutting down")


def make_app(service: BoxService, options: ServerOptions) -> web.Application:
    app = web.Application()
    app[_SERVICE] = service
    app[_GATE] = _Gate(options)
    app[_SOCKETS] = set()
    app.on_shutdown.append(_close_sockets)
    app.router.add_get("/rpc/ws", _rpc_ws)
    app.router.add_get("/healthz", _healthz)
    app.router.add_get("/readyz", _readyz)
    app.router.add_get("/metrics", _metrics)
    app.router.add_get("/v1/sessions/{session_id}/managed-process/ws", _managed_process_ws)
    app.router.add_get(
        "/v1/sessions/{session_id}/managed-process/{process_id}/ws", _managed_process_ws
    )
    return app


async def _on_signals(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for received in signals:
            logger.info(
                "Box: %s received, removing sessions and exiting", signal.Signals(received).name
            )
            scope.cancel()
            return


async def serve(
    options: ServerOptions,
    runtime: BoxRuntime | None = None,
    *,
    handle_signals: bool = True,
    task_status: TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Run the Box until a signal, the end of stdin (stdio mode) or cancellation.

    Started with ``await task_group.start(serve, ...)``, it reports the port it listens
    on (``options.port``; the one the system chose for ``0``) once it serves, and raises
    :class:`StartupError` before that when it cannot."""
    check_options(options)
    runtime = runtime or BoxRuntime()
    runtime.settings.listen_host = options.host
    if runtime.config.backend == "host":
        try:
            check_host_backend(runtime.config, options.host)
        except BoxHostBackendRefusedError as exc:
            raise StartupError(f"{exc.code}: {exc.message}") from None
    service = BoxService(runtime)
    async with runtime.running():
        runner = web.AppRunner(make_app(service, options), handle_signals=False)
        await runner.setup()
        try:
            site = web.TCPSite(runner, options.host, options.port)
            bound = options.port
            try:
                await site.start()
            except OSError as exc:
                if not options.stdio:
                    raise StartupError(
                        f"cannot listen on {options.host}:{options.port}: {exc}"
                    ) from exc
                logger.warning(
                    "Box: port %s unavailable (%s); serving stdio only", options.port, exc
                )
            else:
                addresses = runner.addresses
                bound = int(addresses[0][1]) if addresses else options.port
                logger.info("Box: listening on %s:%s", options.host, bound)
            task_status.started(bound)
            async with anyio.create_task_group() as tg:
                if handle_signals:
                    tg.start_soon(_on_signals, tg.cancel_scope)
                if options.stdio:
                    await _serve_stdio(service, options)
                    tg.cancel_scope.cancel()
                else:
                    await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await runner.cleanup()


async def _serve_stdio(service: BoxService, options: ServerOptions) -> None:
    from langbot_plugin.rpc.transport_stdio import process_stdio_transport

    async with process_stdio_transport() as transport:
        session = RPCSession(transport, service.dispatcher, name="box-stdio")
        service.attach(session, options.trusted_instance)
        try:
            await session.serve()
        finally:
            service.detach(session)
    logger.info("Box: stdin closed, shutting down")
