"""``lbp rt``: the plugin runtime daemon.

Serves the host's control connection (WebSocket ``/control/ws`` on 5400, or stdio with
``-s``) and plugins under development (WebSocket ``/plugin/debug/ws`` on 5401), with
``/healthz`` on both ports, and ``/status`` (the live plugins and the calls they have
not answered yet: :mod:`.inflight`) and ``/metrics`` (Prometheus text: :mod:`.metrics`)
to loopback clients or with the control token.
Stops on SIGTERM/SIGINT, or when the host closes stdio.
"""

from __future__ import annotations

import hmac
import http
import json
import logging
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from websockets.asyncio.server import Server
from websockets.http11 import Request as HTTPRequest

from langbot_plugin.rpc import RPCSession, Transport
from langbot_plugin.rpc.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from langbot_plugin.rpc.tokens import page_refusal
from langbot_plugin.rpc.transport_ws import AuthDecision, HTTPRequestRoute, serve_ws
from langbot_plugin.runtime.artifacts import ArtifactStore
from langbot_plugin.runtime.confine import Decision
from langbot_plugin.runtime.control import ControlConnection
from langbot_plugin.runtime.dependencies import DependencyInstaller
from langbot_plugin.runtime.inflight import runtime_status
from langbot_plugin.runtime.installations import Installations
from langbot_plugin.runtime.link import PluginLink
from langbot_plugin.runtime.security import (
    PLUGIN_DEBUG_KEY_HEADER,
    PLUGIN_RUNTIME_CONTROL_TOKEN_HEADER,
)
from langbot_plugin.runtime.signatures import SignaturePolicy
from langbot_plugin.runtime.state import CONTROL_TOKEN_ENV, RuntimeOptions, RuntimeState
from langbot_plugin.runtime.workers import Supervisor

__all__ = [
    "CONTROL_PATH",
    "DEBUG_KEY_HEADER",
    "DEBUG_PATH",
    "METRICS_PATH",
    "STATUS_PATH",
    "TOKEN_HEADER",
    "BindError",
    "PluginRuntime",
]

logger = logging.getLogger("langbot_plugin.runtime")

CONTROL_PATH = "/control/ws"
DEBUG_PATH = "/plugin/debug/ws"
STATUS_PATH = "/status"
METRICS_PATH = "/metrics"
#: What an HTTP route answers: status, body, content type.
HTTPAnswer = tuple[http.HTTPStatus, str, str]
TOKEN_HEADER = PLUGIN_RUNTIME_CONTROL_TOKEN_HEADER
DEBUG_KEY_HEADER = PLUGIN_DEBUG_KEY_HEADER


def _healthz() -> tuple[http.HTTPStatus, str]:
    return http.HTTPStatus.OK, "ok\n"


class BindError(Exception):
    """A port of the runtime could not be bound (taken, not allowed, bad address)."""

    def __init__(self, what: str, host: str, port: int, error: OSError) -> None:
        super().__init__(f"cannot listen on {host}:{port} ({what}): {error}")
        self.what = what
        self.host = host
        self.port = port
        self.error = error


class PluginRuntime:
    """The daemon: state plus the servers that feed it."""

    def __init__(self, options: RuntimeOptions) -> None:
        options.check()
        # Workers run with their plugin folder as working directory: every path handed
        # to them must be absolute, so the data folder is resolved once, here.
        options.data_dir = options.data_dir.resolve()
        self.options = options
        self.state = RuntimeState(options)
        self.supervisor = Supervisor(self.state)
        data = options.data_dir
        self.installations = Installations(
            self.state,
            self.supervisor,
            ArtifactStore(data / "artifacts"),
            DependencyInstaller(
                data / "envs",
                index_url=options.pypi_index_url,
                trusted_hosts=options.pypi_trusted_hosts,
                skip_install=options.skip_deps_check,
            ),
            data / "installations",
            signatures=SignaturePolicy(options.signature_policy, options.trusted_keys),
        )
        self.state.metrics.watch(
            self.state.registry, self._worker_counts, lambda: len(self.state.live_runs)
        )
        self.servers: list[Server] = []
        self._stopped = anyio.Event()
        self._started = anyio.Event()
        #: Called once the ports are open (``lbp rt`` settles the garbage collector
        #: there: :mod:`langbot_plugin.serving_gc`); an embedding process leaves it unset.
        self.on_started: Callable[[], None] | None = None

    # ----------------------------------------------------------------- connections

    async def serve_control(self, transport: Transport, name: str = "host") -> None:
        connection = ControlConnection(self.state, self.installations)
        session = RPCSession(transport, connection, name=name)
        try:
            await session.serve()
        finally:
            connection.closed(session)

    def _authorize_control(self, request: HTTPRequest) -> AuthDecision:
        token = self.options.control_token
        if token is None:
            return None
        presented = request.headers.get(TOKEN_HEADER, "")
        if hmac.compare_digest(presented.encode(), token.encode()):
            return None
        return http.HTTPStatus.UNAUTHORIZED, f"missing or wrong {TOKEN_HEADER}"

    def _authorize_debug(self, request: HTTPRequest) -> AuthDecision:
        presented = request.headers.get(DEBUG_KEY_HEADER, "")
        if presented and self.state.debug_keys.lookup(presented) is not None:
            return None
        return (
            http.HTTPStatus.UNAUTHORIZED,
            "invalid or expired plugin debug key: copy a fresh one from the LangBot "
            "plugin debug page into PLUGIN_DEBUG_KEY",
        )

    def _refused(self, request: HTTPRequest, peer: str) -> HTTPAnswer | None:
        """``/status`` and ``/metrics``: :func:`~langbot_plugin.rpc.tokens.page_refusal`."""
        why = page_refusal(
            request.path.split("?", 1)[0],
            token=self.options.control_token or "",
            presented=request.headers.get(TOKEN_HEADER, ""),
            peer=peer,
            header=TOKEN_HEADER,
        )
        if why is None:
            return None
        return http.HTTPStatus.UNAUTHORIZED, why + "\n", "text/plain; charset=utf-8"

    def _status(self, request: HTTPRequest, peer: str) -> HTTPAnswer:
        """``GET /status``: the live plugins and their open calls (JSON)."""
        refused = self._refused(request, peer)
        if refused is not None:
            return refused
        report = runtime_status(self.state.registry, self.state.registry.calls)
        report["live_runs"] = len(self.state.live_runs)
        return http.HTTPStatus.OK, json.dumps(report) + "\n", "application/json"

    def _metrics(self, request: HTTPRequest, peer: str) -> HTTPAnswer:
        """``GET /metrics``: the runtime's metrics (:mod:`.metrics`), Prometheus text."""
        refused = self._refused(request, peer)
        if refused is not None:
            return refused
        return http.HTTPStatus.OK, self.state.metrics.text().decode(), METRICS_CONTENT_TYPE

    def _worker_counts(self) -> dict[str, int]:
        return {
            "dedicated": self.supervisor.live_workers(),
            "shared": self.installations.shared.live_workers(),
        }

    async def _on_control(self, transport: Transport, request: HTTPRequest) -> None:
        await self.serve_control(transport, name=f"host@{request.headers.get('Host', '?')}")

    async def _on_debug(self, transport: Transport, request: HTTPRequest) -> None:
        key = self.state.debug_keys.lookup(request.headers.get(DEBUG_KEY_HEADER, ""))
        if key is None:  # expired between the upgrade and now
            return
        await PluginLink(self.state, key).serve(transport, name="debug-plugin")

    # ----------------------------------------------------------------- lifecycle

    async def wait_started(self) -> None:
        await self._started.wait()

    def stop(self) -> None:
        self._stopped.set()

    async def _listen(
        self,
        what: str,
        port: int,
        on_connection: Callable[[Transport, HTTPRequest], Awaitable[None]],
        path: str,
        authorize: Callable[[HTTPRequest], AuthDecision],
    ) -> Server:
        routes: dict[str, Callable[[], tuple[http.HTTPStatus, str]]] = {"/healthz": _healthz}
        request_routes: dict[str, HTTPRequestRoute] = {
            STATUS_PATH: self._status,
            METRICS_PATH: self._metrics,
        }
        try:
            server = await serve_ws(
                on_connection,
                self.options.host,
                port,
                paths=frozenset({path}),
                authorize=authorize,
                http_routes=routes,
                request_routes=request_routes,
            )
        except OSError as exc:
            raise BindError(what, self.options.host, port, exc) from exc
        self.servers.append(server)
        return server

    async def run(self) -> None:
        """Serve until stopped; raises :class:`BindError` when a port cannot be bound,
        :class:`ConfinementUnavailableError` under ``confine = on`` where it cannot."""
        opts = self.options
        try:
            # before the ports open (a host that connects at once may install at once);
            # said once they are open (a port in use is the one line of a failed start)
            decision = await self.state.confinement.decide()
            await self._listen(
                "debug port", opts.debug_port, self._on_debug, DEBUG_PATH, self._authorize_debug
            )
            if not opts.stdio:
                await self._listen(
                    "control port",
                    opts.control_port,
                    self._on_control,
                    CONTROL_PATH,
                    self._authorize_control,
                )
            self._announce_confinement(decision)
            async with anyio.create_task_group() as tg:
                self.supervisor.bind(tg)
                tg.start_soon(self.state.registry.calls.watch)
                self.installations.shared.bind(tg)
                if opts.handle_signals:
                    tg.start_soon(self._watch_signals, tg.cancel_scope)
                if opts.stdio:
                    tg.start_soon(self._serve_stdio)
                template = self.state.worker_template(sys.executable)
                if template is not None and not decision.confined and not opts.debug_only:
                    tg.start_soon(template.start)  # it imports while the host connects
                if opts.debug_only:
                    logger.info("--debug-only: installed plugins are kept, not started")
                logger.info(
                    "plugin runtime up: control %s, debug ws://%s:%d%s, data in %s",
                    "stdio"
                    if opts.stdio
                    else f"ws://{opts.host}:{opts.control_port}{CONTROL_PATH}",
                    opts.host,
                    opts.debug_port,
                    DEBUG_PATH,
                    opts.data_dir,
                )
                self._started.set()
                if self.on_started is not None:
                    self.on_started()
                await self._stopped.wait()
                tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await self._shutdown()

    def _announce_confinement(self, decision: Decision) -> None:
        """Log how plugin workers run, and why; say so when a confined plugin could still
        reach the control port (it shares the network, and the port has no token)."""
        opts = self.options
        self.state.confinement.announce(decision)
        if (
            decision.confined
            and opts.confinement.network == "host"
            and not opts.stdio
            and opts.control_token is None
        ):
            logger.warning(
                "plugin workers share this machine's network and the control port has no "
                'token: a plugin can connect to it; set %s, or worker_network = "none"',
                CONTROL_TOKEN_ENV,
            )

    async def _serve_stdio(self) -> None:
        from langbot_plugin.rpc.transport_stdio import process_stdio_transport

        async with process_stdio_transport() as transport:
            await self.serve_control(transport, name="host-stdio")
        logger.info("host closed the stdio control channel; stopping")
        self.stop()

    async def _watch_signals(self, scope: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for received in signals:
                logger.info("received %s; stopping", signal.Signals(received).name)
                self.stop()
                return

    async def _shutdown(self) -> None:
        for server in self.servers:
            server.close()
        with anyio.move_on_after(15):
            async with anyio.create_task_group() as tg:
                tg.start_soon(self.supervisor.stop_all)
                tg.start_soon(self.installations.shared.stop_all)
        with anyio.move_on_after(10):
            await self.state.close_template()
        with anyio.move_on_after(10):
            async with anyio.create_task_group() as tg:
                for handle in list(self.state.registry):
                    tg.start_soon(self._retire, handle)
        for server in self.servers:
            with anyio.move_on_after(5):
                await server.wait_closed()

    async def _retire(self, handle: Any) -> None:
        await self.state.retire(handle, reason="stopped with the runtime")
