"""The daemon side: connect out to a hub, run its jobs, relay MCP for local harnesses.

:class:`AgentRuntimeDaemonClient` is subclassed by a runner's daemon program, which
implements :meth:`~AgentRuntimeDaemonClient.run_job`. For a job's harness,
:class:`LocalMCPProxy` serves an HTTP endpoint on ``127.0.0.1`` whose path holds a
per-proxy secret; it forwards each MCP request body to the hub (``mcp.request``),
where the job's LangBot tools answer it through the ``mcp`` server, and returns the
hub's answer. The proxy itself does not interpret MCP.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
from contextlib import nullcontext
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from langbot_plugin.api.agent_tools._daemon_wire import (
    AgentRuntimeDaemonError,
    JobMessage,
    MCPResponse,
    RunStart,
    decode,
    encode,
    parse,
    run_failed,
)
from langbot_plugin.api.agent_tools._loopback import ServedOnLoopback
from langbot_plugin.api.agent_tools._server import HTTPApp
from langbot_plugin.api.agent_tools.mcp_config import AgentMCPServerConfig
from langbot_plugin.api.agent_tools.mcp_protocol import jsonrpc_error

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from langbot_plugin.rpc.transport import Transport

__all__ = ["AgentRuntimeDaemonClient", "LocalMCPProxy", "RelayedAnswer"]

logger = logging.getLogger(__name__)

READY_TIMEOUT = 30.0
CANCELLED = "agent_runtime.daemon_cancelled"


@dataclass
class RelayedAnswer:
    """The hub's answer to a relayed MCP request."""

    payload: Any
    status: int


@dataclass(eq=False)
class _Pending:
    done: anyio.Event = field(default_factory=anyio.Event)
    answer: RelayedAnswer | None = None


class AgentRuntimeDaemonClient:
    """A daemon: keeps a connection to the hub and runs the jobs it sends.

    Subclasses implement :meth:`run_job`; it reports with :meth:`emit_event` and is
    cancelled when the hub cancels the job or the connection drops. The job is
    finished (``run.finished``) when ``run_job`` returns.
    """

    def __init__(
        self,
        *,
        url: str,
        daemon_id: str,
        token: str = "",
        reconnect_delay: float = 5.0,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        self.url = url
        self.daemon_id = daemon_id
        self.token = token
        self.reconnect_delay = reconnect_delay
        self.metadata = dict(metadata or {})
        self._transport: Transport | None = None
        self._send_lock = anyio.Lock()
        self._jobs: dict[str, anyio.CancelScope] = {}
        self._pending: dict[str, _Pending] = {}
        #: Set while connected to the hub (for callers that want to wait for it).
        self.connected = anyio.Event()

    # ------------------------------------------------------------------ to override

    async def run_job(self, job_id: str, payload: dict[str, Any]) -> None:
        """Run one job; override in the daemon program."""
        raise NotImplementedError

    # ------------------------------------------------------------------ connection

    async def run_forever(self) -> None:
        """Stay connected, reconnecting ``reconnect_delay`` seconds after a loss."""
        while True:
            try:
                await self.run_once()
            except (OSError, AgentRuntimeDaemonError) as exc:
                logger.warning("daemon %s: %s", self.daemon_id, exc)
            except Exception as exc:  # a refused upgrade, a broken frame: retry later
                logger.warning("daemon %s disconnected: %r", self.daemon_id, exc)
            await anyio.sleep(self.reconnect_delay)

    async def run_once(self) -> None:
        """One connection: handshake, then serve the hub until it goes away."""
        from langbot_plugin.rpc.transport_ws import connect_ws

        async with connect_ws(self.url) as transport:
            await transport.send.send(
                encode(
                    "daemon.hello",
                    daemon_id=self.daemon_id,
                    token=self.token,
                    metadata={"pid": os.getpid(), "cwd": os.getcwd(), **self.metadata},
                )
            )
            await self._await_ready(transport)
            logger.info("daemon %s connected to %s", self.daemon_id, self.url)
            self._transport = transport
            self.connected.set()
            try:
                async with anyio.create_task_group() as tg:
                    await self._read(transport, tg)
                    tg.cancel_scope.cancel()
            finally:
                self._transport = None
                self.connected = anyio.Event()
                for pending in self._pending.values():
                    pending.done.set()
                self._pending.clear()

    async def _await_ready(self, transport: Transport) -> None:
        with anyio.fail_after(READY_TIMEOUT):
            try:
                frame = await transport.receive.receive()
            except anyio.EndOfStream:
                raise AgentRuntimeDaemonError("the hub closed the connection") from None
        decoded = decode(frame) if isinstance(frame, str) else None
        if decoded is None or decoded[0] != "daemon.ready":
            reason = decoded[1].get("error") if decoded else None
            raise AgentRuntimeDaemonError(f"the hub refused the daemon: {reason or frame!r}")

    async def _read(self, transport: Transport, tg: TaskGroup) -> None:
        while True:
            try:
                frame = await transport.receive.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                return
            decoded = decode(frame) if isinstance(frame, str) else None
            if decoded is None:
                continue
            kind, message = decoded
            if kind == "run.start":
                start = parse(RunStart, message)
                if start is not None and start.job_id and start.job_id not in self._jobs:
                    scope = anyio.CancelScope()
                    self._jobs[start.job_id] = scope
                    tg.start_soon(self._run_job, start.job_id, start.payload, scope)
            elif kind == "run.cancel":
                cancel = parse(JobMessage, message)
                scope = self._jobs.get(cancel.job_id) if cancel else None
                if scope is not None:
                    scope.cancel()
            elif kind == "mcp.response":
                response = parse(MCPResponse, message)
                pending = self._pending.pop(str(response.request_id), None) if response else None
                if response is not None and pending is not None:
                    status = response.status or (202 if response.payload is None else 200)
                    pending.answer = RelayedAnswer(response.payload, status)
                    pending.done.set()

    async def _run_job(
        self, job_id: str, payload: dict[str, Any], scope: anyio.CancelScope
    ) -> None:
        failure: dict[str, Any] | None = None
        try:
            with scope:
                await self.run_job(job_id, payload)
            if scope.cancelled_caught:
                failure = run_failed("daemon run cancelled", CANCELLED, retryable=True)
        except Exception as exc:
            logger.exception("daemon job %s failed", job_id)
            failure = run_failed(str(exc), "agent_runtime.daemon_unexpected")
        finally:
            self._jobs.pop(job_id, None)
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            try:
                if failure is not None:
                    await self.emit_event(job_id, failure)
                await self.finish_job(job_id)
            except (AgentRuntimeDaemonError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass  # the connection is gone; the hub has failed the job already

    async def _send(self, frame: str) -> None:
        transport = self._transport
        if transport is None:
            raise AgentRuntimeDaemonError("the daemon is not connected to its hub")
        async with self._send_lock:
            await transport.send.send(frame)

    # ------------------------------------------------------------------ for run_job

    async def emit_event(self, job_id: str, event: dict[str, Any]) -> None:
        """Send one event (an ``AgentRunResult`` dict) of a job to the hub."""
        await self._send(encode("run.event", job_id=job_id, event=event))

    async def finish_job(self, job_id: str) -> None:
        """Tell the hub the job is over (done for you when ``run_job`` returns)."""
        await self._send(encode("run.finished", job_id=job_id))

    def create_mcp_proxy(
        self, job_id: str, *, request_timeout: float = 60.0, server_name: str = "langbot_agent"
    ) -> LocalMCPProxy:
        """A local MCP endpoint for the job's harness; ``start()`` it in ``run_job``."""
        return LocalMCPProxy(self, job_id, request_timeout=request_timeout, server_name=server_name)

    async def relay_mcp(
        self,
        job_id: str,
        payload: Any,
        *,
        timeout: float,
        headers: dict[str, str] | None = None,
    ) -> RelayedAnswer:
        """Forward one MCP request body of a job to the hub and wait for its answer."""
        request_id = secrets.token_urlsafe(12)
        pending = _Pending()
        self._pending[request_id] = pending
        try:
            frame = encode(
                "mcp.request",
                request_id=request_id,
                job_id=job_id,
                payload=payload,
                headers=dict(headers or {}),
            )
            await self._send(frame)
            with anyio.fail_after(timeout):
                await pending.done.wait()
        finally:
            self._pending.pop(request_id, None)
        if pending.answer is None:
            raise AgentRuntimeDaemonError("the connection to the hub was lost")
        return pending.answer

    async def request_mcp(self, job_id: str, payload: Any, timeout: float) -> Any:
        """:meth:`relay_mcp`'s JSON-RPC answer (``None`` for a notification)."""
        return (await self.relay_mcp(job_id, payload, timeout=timeout)).payload


@dataclass(eq=False, repr=False)
class LocalMCPProxy(ServedOnLoopback):
    """``http://127.0.0.1:<port>/mcp/<secret>``: a job's MCP endpoint on the daemon
    machine, relayed to the hub. ``start()`` from async code; ``stop()`` after."""

    _served_label = "MCP proxy"

    daemon: AgentRuntimeDaemonClient
    job_id: str
    _: KW_ONLY
    request_timeout: float = 60.0
    server_name: str = "langbot_agent"
    _secret: str = field(default_factory=lambda: secrets.token_urlsafe(24), init=False)

    def _app(self) -> HTTPApp:
        from starlette.applications import Starlette
        from starlette.responses import JSONResponse
        from starlette.routing import Route

        async def healthz(request: Request) -> Response:
            return JSONResponse({"ok": True})

        routes = [
            Route("/mcp/{secret}", self._relay, methods=["GET", "POST", "DELETE"]),
            Route("/healthz", healthz, methods=["GET"]),
        ]
        return HTTPApp(app=Starlette(routes=routes), lifespan=nullcontext)

    async def _relay(self, request: Request) -> Response:
        from starlette.responses import JSONResponse, Response

        if not secrets.compare_digest(str(request.path_params.get("secret", "")), self._secret):
            return JSONResponse({"ok": False, "error": "not found"}, status_code=404)
        if request.method != "POST":  # stateless: no event stream, no session to delete
            return Response(status_code=405, headers={"Allow": "POST"})
        try:
            payload = json.loads(await request.body())
        except ValueError as exc:
            return JSONResponse(jsonrpc_error(None, -32700, f"parse error: {exc}"), status_code=400)
        headers = {k: v for k, v in request.headers.items() if k.lower().startswith("mcp-")}
        try:
            answer = await self.daemon.relay_mcp(
                self.job_id, payload, timeout=self.request_timeout, headers=headers
            )
        except TimeoutError:
            error = jsonrpc_error(None, -32000, "LangBot did not answer in time")
            return JSONResponse(error, status_code=504)
        except AgentRuntimeDaemonError as exc:
            return JSONResponse(jsonrpc_error(None, -32000, exc.message), status_code=502)
        if answer.payload is None:
            return Response(status_code=202)
        return JSONResponse(answer.payload, status_code=answer.status)

    def start(self) -> None:
        """Bind ``127.0.0.1`` and serve."""
        if self._service is None:
            name = f"langbot-mcp-proxy-{self.job_id}"
            self._serve(self._app(), host="127.0.0.1", port=0, name=name)

    @property
    def http_mcp_endpoint(self) -> str:
        """The URL to give the harness (its path is the proxy's secret)."""
        return f"{self.endpoint}/mcp/{self._secret}"

    def mcp_server(self) -> AgentMCPServerConfig:
        """The harness's MCP server entry."""
        return AgentMCPServerConfig.http(name=self.server_name, url=self.http_mcp_endpoint)

    def server_config(self) -> dict[str, Any]:
        """:meth:`mcp_server` as a dict (with ``type``)."""
        return self.mcp_server().to_dict(include_type=True)
