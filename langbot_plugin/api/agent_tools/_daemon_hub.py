"""The hub a runner plugin opens for runtime daemons on users' machines.

A daemon connects out to the hub (WebSocket), says hello with its id and the hub's
token, and then runs jobs the hub sends it, streaming run events back and relaying
its harness's MCP requests for the job's LangBot tools. Which connection may act on a
job, and how a dropped one ends its jobs: ``docs/agent-runner.md``, "Runtimes on
users' machines (the daemon hub)".
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

import anyio
from anyio.abc import ObjectReceiveStream, TaskGroup
from anyio.streams.memory import MemoryObjectSendStream

from langbot_plugin.api.agent_tools._daemon_wire import (
    AgentRuntimeDaemonError,
    Hello,
    JobMessage,
    MCPRequest,
    RunEvent,
    decode,
    encode,
    parse,
    run_failed,
)
from langbot_plugin.api.agent_tools._server import (
    answer_in_process,
    build_mcp_server,
    is_loopback,
    surface_from_scope,
    tokens_match,
)
from langbot_plugin.api.agent_tools.mcp_protocol import AgentToolsMCPResolver, jsonrpc_error

if TYPE_CHECKING:
    from websockets.asyncio.server import Server

    from langbot_plugin.api.agent_tools.external_tools import AgentRunExternalTools
    from langbot_plugin.rpc.transport import Transport

__all__ = [
    "DAEMON_MCP_SERVER_INFO",
    "AgentRuntimeDaemonHub",
    "DaemonConnection",
    "DaemonRunSession",
]

logger = logging.getLogger(__name__)

DAEMON_MCP_SERVER_INFO = {"name": "langbot-agent-daemon", "version": "0.1.0"}
HELLO_TIMEOUT = 10.0
EVENT_BUFFER = 64  # events a job may have queued before its daemon waits


class DaemonConnection(TypedDict):
    """A connected daemon, as :meth:`AgentRuntimeDaemonHub.daemon_connections` reports
    it (the reference's record: ``websocket`` is the connection's transport here, its
    pair of message streams over the WebSocket)."""

    daemon_id: str
    websocket: Any
    metadata: dict[str, Any]
    connected_at: float
    last_seen_at: float
    active_jobs: set[str]


class DaemonRunSession(TypedDict):
    """A job in flight, as :meth:`AgentRuntimeDaemonHub.run_sessions` reports it
    (``queue`` is the job's bounded event stream, where the reference had an
    ``asyncio.Queue``; its daemon waits when it is full)."""

    job_id: str
    daemon_id: str
    queue: Any
    tools: AgentRunExternalTools | None
    started_at: float


@dataclass(eq=False)
class _Connection:
    daemon_id: str
    transport: Transport
    metadata: dict[str, Any]
    connected_at: float = field(default_factory=time.time)
    last_seen_at: float = field(default_factory=time.time)
    jobs: set[str] = field(default_factory=set[str])
    lock: anyio.Lock = field(default_factory=anyio.Lock)

    async def send(self, frame: str) -> None:
        async with self.lock:
            await self.transport.send.send(frame)


@dataclass(eq=False)
class _Job:
    job_id: str
    connection: _Connection
    tools: AgentRunExternalTools | None
    events: MemoryObjectSendStream[dict[str, Any]]
    finished: bool = False
    failure: dict[str, Any] | None = None
    started_at: float = field(default_factory=time.time)
    mcp_scopes: set[anyio.CancelScope] = field(default_factory=set[anyio.CancelScope])


class AgentRuntimeDaemonHub:
    """A WebSocket hub that hands runs to daemons and serves their MCP requests."""

    def __init__(self, *, error_code_prefix: str = "agent_runtime") -> None:
        self.error_code_prefix = error_code_prefix
        self.host = ""
        self.port = 0
        self.token = ""
        self._server: Server | None = None
        self._connections: dict[str, _Connection] = {}
        self._jobs: dict[str, _Job] = {}
        self._changed = anyio.Event()
        self._mcp_server: Any = None

    def _error(
        self, what: str, message: str, *, retryable: bool = False
    ) -> AgentRuntimeDaemonError:
        return AgentRuntimeDaemonError(
            message, code=f"{self.error_code_prefix}.{what}", retryable=retryable
        )

    def _offline(self, daemon_id: str) -> AgentRuntimeDaemonError:
        return self._error("daemon_offline", f"daemon {daemon_id} is not connected", retryable=True)

    # ------------------------------------------------------------------ lifecycle

    @property
    def is_running(self) -> bool:
        return self._server is not None

    @property
    def endpoint(self) -> str:
        """``ws://host:port`` of the listening socket (empty when stopped)."""
        if self._server is None:
            return ""
        host, port = next(iter(self._server.sockets)).getsockname()[:2]
        return f"ws://[{host}]:{port}" if ":" in str(host) else f"ws://{host}:{port}"

    async def start(self, *, host: str, port: int, token: str = "") -> None:
        """Listen for daemons. Away from loopback a token is required."""
        if self._server is not None:
            if (self.host, self.port, self.token) == (host, port, token):
                return
            raise self._error("daemon_hub_conflict", f"daemon hub listens at {self.endpoint}")
        if not token and not is_loopback(host):
            raise self._error(
                "daemon_hub_token_required",
                f"a daemon hub listening on {host} needs a token (daemon-token)",
            )
        from langbot_plugin.rpc.transport_ws import serve_ws

        self.host, self.port, self.token = host, port, token
        self._server = await serve_ws(self._serve_connection, host, port)
        logger.info("agent runtime daemon hub listening at %s", self.endpoint)

    async def ensure_started_from_config(self, config: dict[str, Any]) -> None:
        """:meth:`start` with the settings of a plugin config (see
        ``agent_runtime_daemon_config_from_plugin_config``)."""
        from langbot_plugin.api.agent_tools.daemon import (
            agent_runtime_daemon_config_from_plugin_config,
        )

        settings = agent_runtime_daemon_config_from_plugin_config(config)
        await self.start(host=settings["host"], port=settings["port"], token=settings["token"])

    async def stop(self) -> None:
        """Stop listening and drop every daemon (their jobs fail)."""
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        await server.wait_closed()
        for connection in list(self._connections.values()):
            self._drop(connection)

    # ------------------------------------------------------------------ daemons

    def daemon_connections(self) -> list[DaemonConnection]:
        """A snapshot of the connected daemons (copies: changing them changes nothing)."""
        return [
            DaemonConnection(
                daemon_id=c.daemon_id,
                websocket=c.transport,
                metadata=dict(c.metadata),
                connected_at=c.connected_at,
                last_seen_at=c.last_seen_at,
                active_jobs=set(c.jobs),
            )
            for c in self._connections.values()
        ]

    def run_sessions(self) -> list[DaemonRunSession]:
        """A snapshot of the jobs in flight, oldest first."""
        return [
            DaemonRunSession(
                job_id=job.job_id,
                daemon_id=job.connection.daemon_id,
                queue=job.events,
                tools=job.tools,
                started_at=job.started_at,
            )
            for job in self._jobs.values()
            if not job.finished
        ]

    async def list_daemons(self) -> list[dict[str, Any]]:
        """The connected daemons with their metadata and active jobs (JSON-ready)."""
        return [
            {
                "daemon_id": c["daemon_id"],
                "metadata": c["metadata"],
                "connected_at": c["connected_at"],
                "last_seen_at": c["last_seen_at"],
                "active_jobs": sorted(c["active_jobs"]),
            }
            for c in self.daemon_connections()
        ]

    async def wait_for_daemon(self, daemon_id: str, timeout: float) -> None:
        """Return once ``daemon_id`` is connected; ``<prefix>.daemon_offline`` after
        ``timeout`` seconds."""
        with anyio.move_on_after(max(0.0, timeout)):
            while daemon_id not in self._connections:
                await self._changed.wait()
            return
        raise self._offline(daemon_id)

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def _drop(self, connection: _Connection) -> None:
        if self._connections.get(connection.daemon_id) is connection:
            del self._connections[connection.daemon_id]
            self._notify()
        for job_id in list(connection.jobs):
            job = self._jobs.get(job_id)
            if job is not None and job.connection is connection and not job.finished:
                job.failure = run_failed(
                    f"daemon {connection.daemon_id} disconnected",
                    f"{self.error_code_prefix}.daemon_disconnected",
                    retryable=True,
                )
                self._end(job)

    def _end(self, job: _Job) -> None:
        job.finished = True
        job.events.close()
        for scope in job.mcp_scopes:
            scope.cancel()

    # ------------------------------------------------------------------ jobs

    async def run_job(
        self,
        *,
        daemon_id: str,
        payload: dict[str, Any],
        tools: AgentRunExternalTools | None,
        timeout: float,
    ) -> AsyncGenerator[dict[str, Any]]:
        """Run a job on ``daemon_id`` and yield its events (``AgentRunResult`` dicts)
        until the daemon finishes it. Leaving early cancels the job on the daemon."""
        if self._server is None:
            raise self._error("daemon_hub_not_started", "daemon hub is not started")
        connection = self._connections.get(daemon_id)
        if connection is None:
            raise self._offline(daemon_id)
        send, receive = anyio.create_memory_object_stream[dict[str, Any]](EVENT_BUFFER)
        job = _Job(secrets.token_urlsafe(16), connection, tools, send)
        self._jobs[job.job_id] = job
        connection.jobs.add(job.job_id)
        try:
            await connection.send(encode("run.start", job_id=job.job_id, payload=payload))
            async for event in self._events(job, receive, timeout):
                yield event
        finally:
            receive.close()  # a daemon blocked on a full buffer gives up at once
            await self._forget(job)

    async def _events(
        self, job: _Job, receive: ObjectReceiveStream[dict[str, Any]], timeout: float
    ) -> AsyncGenerator[dict[str, Any]]:
        deadline = anyio.current_time() + max(1.0, timeout)
        while True:
            event: dict[str, Any] | None = None
            with anyio.move_on_after(deadline - anyio.current_time()):
                try:
                    event = await receive.receive()
                except anyio.EndOfStream:
                    break
            if event is None:
                raise self._error("daemon_timeout", "daemon run timed out", retryable=True)
            yield event
        if job.failure is not None:
            yield job.failure

    async def _forget(self, job: _Job) -> None:
        self._jobs.pop(job.job_id, None)
        job.connection.jobs.discard(job.job_id)
        was_finished = job.finished
        self._end(job)
        if self._connections.get(job.connection.daemon_id) is not job.connection:
            return
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            try:
                if not was_finished:
                    await job.connection.send(encode("run.cancel", job_id=job.job_id))
                await job.connection.send(encode("run.cleanup", job_id=job.job_id))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass

    def _owned(self, connection: _Connection, job_id: str) -> _Job | None:
        job = self._jobs.get(job_id)
        return job if job is not None and job.connection is connection else None

    # ------------------------------------------------------------------ connections

    async def _serve_connection(self, transport: Transport, request: Any) -> None:
        connection = await self._handshake(transport)
        if connection is None:
            return
        try:
            async with anyio.create_task_group() as tg:
                await self._read(connection, tg)
                tg.cancel_scope.cancel()
        finally:
            self._drop(connection)

    async def _handshake(self, transport: Transport) -> _Connection | None:
        hello: Hello | None = None
        with anyio.move_on_after(HELLO_TIMEOUT):
            try:
                frame = await transport.receive.receive()
            except anyio.EndOfStream:
                return None
            decoded = decode(frame) if isinstance(frame, str) else None
            if decoded is not None and decoded[0] == "daemon.hello":
                hello = parse(Hello, decoded[1])
        refusal = ""
        if hello is None:
            refusal = "daemon.hello required"
        elif not hello.daemon_id.strip():
            refusal = "daemon_id required"
        elif self.token and not tokens_match(hello.token, self.token):
            refusal = "invalid token"
        if hello is None or refusal:
            logger.warning("refused a daemon connection: %s", refusal)
            await self._refuse(transport, refusal)
            return None
        connection = _Connection(hello.daemon_id.strip(), transport, dict(hello.metadata))
        previous = self._connections.get(connection.daemon_id)
        self._connections[connection.daemon_id] = connection
        if previous is not None:
            self._drop(previous)
            await self._refuse(previous.transport, "replaced")
        ready = encode("daemon.ready", daemon_id=connection.daemon_id, server_time=time.time())
        await connection.send(ready)
        self._notify()
        return connection

    @staticmethod
    async def _refuse(transport: Transport, reason: str) -> None:
        with anyio.CancelScope(shield=True), anyio.move_on_after(2):
            try:
                await transport.send.send(encode("daemon.error", error=reason))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass
            await transport.send.aclose()

    async def _read(self, connection: _Connection, tg: TaskGroup) -> None:
        while True:
            try:
                frame = await connection.transport.receive.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                return
            decoded = decode(frame) if isinstance(frame, str) else None
            if decoded is None:
                logger.warning("daemon %s sent an unreadable frame", connection.daemon_id)
                continue
            kind, message = decoded
            connection.last_seen_at = time.time()
            if kind == "daemon.ping":
                await connection.send(encode("daemon.pong", time=time.time()))
            elif kind == "run.event":
                await self._on_event(connection, parse(RunEvent, message))
            elif kind == "run.finished":
                finished = parse(JobMessage, message)
                job = self._owned(connection, finished.job_id) if finished else None
                if job is not None:
                    self._end(job)
            elif kind == "mcp.request":
                request = parse(MCPRequest, message)
                if request is not None:
                    tg.start_soon(self._answer_mcp, connection, request)
            else:
                logger.debug("daemon %s sent %r; ignored", connection.daemon_id, kind)

    async def _on_event(self, connection: _Connection, event: RunEvent | None) -> None:
        job = self._owned(connection, event.job_id) if event is not None else None
        if event is None or job is None:
            logger.warning("daemon %s sent an event of a job it does not own", connection.daemon_id)
            return
        try:
            await job.events.send(event.event)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the run stopped listening

    async def _answer_mcp(self, connection: _Connection, request: MCPRequest) -> None:
        job = self._owned(connection, request.job_id)
        status, payload = 200, None
        if job is None:
            status = 403
            payload = jsonrpc_error(None, -32001, "this daemon does not own that job")
            logger.warning("daemon %s asked for tools of another job", connection.daemon_id)
        elif job.tools is None:
            status = 403
            payload = jsonrpc_error(None, -32001, "LangBot assets are unavailable for this run")
        else:
            scope = anyio.CancelScope()
            job.mcp_scopes.add(scope)
            status, payload = 503, jsonrpc_error(None, -32000, "the run has ended")
            with scope:
                answer = await answer_in_process(
                    self._daemon_mcp_server(),
                    AgentToolsMCPResolver(job.tools),
                    request.payload,
                    headers=request.headers,
                )
                status, payload = answer.status, answer.json()
            job.mcp_scopes.discard(scope)
        reply = encode(
            "mcp.response",
            request_id=request.request_id,
            job_id=request.job_id,
            payload=payload,
            status=status,
        )
        try:
            await connection.send(reply)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass

    def _daemon_mcp_server(self) -> Any:
        if self._mcp_server is None:
            self._mcp_server = build_mcp_server(
                surface_from_scope,
                name=DAEMON_MCP_SERVER_INFO["name"],
                version=DAEMON_MCP_SERVER_INFO["version"],
            )
        return self._mcp_server
