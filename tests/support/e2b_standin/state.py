"""The stand-in's state: its sandboxes, the request log, injected faults, expiry."""

from __future__ import annotations

import base64
import contextlib
from dataclasses import dataclass, field

import anyio
from aiohttp import web
from anyio.abc import TaskGroup

from tests.support.e2b_standin.sandbox import SandboxDir

__all__ = ["Logged", "SandboxRecord", "StandInState"]


@dataclass(frozen=True, slots=True)
class Logged:
    route: str
    sandbox_id: str = ""
    paths: tuple[str, ...] = ()


@dataclass
class SandboxRecord:
    sandbox_id: str
    template: str
    metadata: dict[str, str]
    envs: dict[str, str]
    directory: SandboxDir
    deadline: float
    started_at: str
    alive: bool = True
    timeouts: list[int] = field(default_factory=list[int])
    rearm: anyio.Event = field(default_factory=anyio.Event)


class StandInState:
    """The sandboxes, the request log and the injected faults, shared by every route."""

    def __init__(self, base: str, tg: TaskGroup, api_key: str) -> None:
        self.base = base
        self.api_key = api_key
        self.url = ""
        self.sandboxes: dict[str, SandboxRecord] = {}
        self.log: list[Logged] = []
        self._faults: dict[str, tuple[int, str, int]] = {}
        self._tg = tg

    # ------------------------------------------------------------------ for tests

    def fail_next(self, route: str, status: int, message: str, times: int = 1) -> None:
        """The next ``times`` calls of ``route`` (a :class:`Logged` route) answer ``status``."""
        self._faults[route] = (status, message, times)

    def alive(self, **metadata: str) -> list[SandboxRecord]:
        return [
            s
            for s in self.sandboxes.values()
            if s.alive and all(s.metadata.get(k) == v for k, v in metadata.items())
        ]

    def routes(self, *names: str) -> list[Logged]:
        return [entry for entry in self.log if not names or entry.route in names]

    # ------------------------------------------------------------------ plumbing

    def _fault(self, route: str) -> web.Response | None:
        fault = self._faults.pop(route, None)
        if fault is None:
            return None
        status, message, times = fault
        if times > 1:
            self._faults[route] = (status, message, times - 1)
        return web.json_response({"code": status, "message": message}, status=status)

    def _authorized(self, request: web.Request) -> web.Response | None:
        if request.headers.get("X-API-KEY") != self.api_key:
            return web.json_response({"code": 401, "message": "Invalid API key"}, status=401)
        return None

    def _sandbox(self, request: web.Request) -> SandboxRecord | web.Response:
        sandbox_id = request.headers.get("E2b-Sandbox-Id", "")
        record = self.sandboxes.get(sandbox_id)
        if record is None or not record.alive:
            message = f"The sandbox {sandbox_id} was not found"
            return web.json_response({"code": 502, "message": message}, status=502)
        return record

    @staticmethod
    def _user(request: web.Request) -> str:
        header = request.headers.get("Authorization", "")
        if header.startswith("Basic "):
            with contextlib.suppress(ValueError):
                return base64.b64decode(header[6:]).decode().split(":", 1)[0] or "user"
        return request.query.get("username", "user")

    def kill(self, record: SandboxRecord) -> None:
        if not record.alive:
            return
        record.alive = False
        record.directory.kill_all()
        record.rearm.set()
        self._tg.start_soon(self._remove_when_done, record)

    async def _remove_when_done(self, record: SandboxRecord) -> None:
        with anyio.move_on_after(10):
            for started in list(record.directory.processes.values()):
                await started.exited.wait()
        await anyio.to_thread.run_sync(record.directory.remove)

    async def _expire(self, record: SandboxRecord) -> None:
        while record.alive:
            record.rearm = anyio.Event()
            with anyio.move_on_after(max(0.0, record.deadline - anyio.current_time())):
                await record.rearm.wait()
            if record.alive and anyio.current_time() >= record.deadline:
                self.log.append(Logged("expired", record.sandbox_id))
                self.kill(record)
