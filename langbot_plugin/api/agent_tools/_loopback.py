"""Serving an ASGI app with uvicorn on the running event loop, from synchronous code.

The bridge's and gateway's public ``start()``/``stop()`` are synchronous (runner
plugins call them without ``await``), so serving cannot live in a task group of the
caller. :class:`LoopbackHTTPService` binds its socket in ``start()`` -- the port is
known and connections queue from then on -- and serves in one tracked task of the
current loop, which ``stop()`` ends and ``aclose()`` awaits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from typing import Any, ClassVar

import anyio

from langbot_plugin.api.agent_tools._server import HTTPApp

__all__ = ["LoopbackHTTPService", "ServedOnLoopback"]

logger = logging.getLogger(__name__)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    return socket.create_server((host.strip("[]"), port), family=family)


_RUNNING: set[asyncio.Task[None]] = set()


class LoopbackHTTPService:
    """An ASGI app served by uvicorn on the running event loop (the module docstring
    says how it starts and stops)."""

    def __init__(self, http_app: HTTPApp, *, host: str, port: int, name: str) -> None:
        self._http_app = http_app
        self.host = host
        self.name = name
        self._requested_port = port
        self._port: int | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None

    @property
    def port(self) -> int:
        """The bound port."""
        if self._port is None:
            raise RuntimeError(f"{self.name} is not started")
        return self._port

    @property
    def url(self) -> str:
        """``http://host:port`` of the bound socket (a wildcard host is reported as the
        loopback address, which is where local clients reach it)."""
        host = self.host.strip("[]")
        host = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(host, host)
        return f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"

    @property
    def running(self) -> bool:
        """Started, not stopped, and its loop is the current one."""
        if self._task is None or self._task.done():
            return False
        try:
            return self._task.get_loop() is asyncio.get_running_loop()
        except RuntimeError:
            return False

    def start(self) -> None:
        """Bind and start serving (needs a running event loop)."""
        if self._task is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(f"{self.name} must be started from async code") from None
        sock = _bind(self.host, self._requested_port)
        self._port = int(sock.getsockname()[1])
        self._stop = asyncio.Event()
        task = loop.create_task(self._serve(sock, self._stop), name=self.name)
        _RUNNING.add(task)  # the loop keeps only weak references to tasks
        task.add_done_callback(self._finished)
        self._task = task

    def _finished(self, task: asyncio.Task[None]) -> None:
        _RUNNING.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("%s stopped on an error", self.name, exc_info=task.exception())

    async def _serve(self, sock: socket.socket, stop: asyncio.Event) -> None:
        import uvicorn

        class _Quiet(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Any:  # the worker owns the process's signals
                yield

        config = uvicorn.Config(
            self._http_app.app,
            lifespan="off",
            log_config=None,
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=5,
        )
        server = _Quiet(config)
        try:
            async with self._http_app.lifespan(), anyio.create_task_group() as tg:

                async def stop_when_asked() -> None:
                    await stop.wait()
                    server.should_exit = True

                tg.start_soon(stop_when_asked)
                await server.serve(sockets=[sock])
                tg.cancel_scope.cancel()
        finally:
            sock.close()

    def stop(self) -> None:
        """Ask the service to stop (connections in flight get a few seconds)."""
        if self._stop is not None:
            self._stop.set()

    async def aclose(self) -> None:
        """Stop and wait until the socket is closed."""
        self.stop()
        task = self._task
        if task is not None and not task.done():
            with anyio.CancelScope(shield=True):
                await asyncio.wait([task])


class ServedOnLoopback:
    """What the MCP bridge, the asset gateway and the daemon's MCP proxy share: at most
    one :class:`LoopbackHTTPService` at a time, its stop and close, and its endpoint.
    Subclasses name themselves in :attr:`_served_label` (for the "not started" error)."""

    _served_label: ClassVar[str]
    _service: LoopbackHTTPService | None = None

    def _serve(self, http_app: HTTPApp, *, host: str, port: int, name: str) -> None:
        service = LoopbackHTTPService(http_app, host=host, port=port, name=name)
        service.start()
        self._service = service

    def stop(self) -> None:
        """Stop serving (returns at once; the socket closes shortly after)."""
        service, self._service = self._service, None
        if service is not None:
            service.stop()

    async def aclose(self) -> None:
        """Stop serving and wait until the socket is closed."""
        service, self._service = self._service, None
        if service is not None:
            await service.aclose()

    @property
    def endpoint(self) -> str:
        """``http://host:port`` of the bound socket."""
        if self._service is None:
            raise RuntimeError(f"{self._served_label} is not started")
        return self._service.url
