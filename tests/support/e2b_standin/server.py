"""The stand-in's HTTP server: E2B's control plane and envd, on one 127.0.0.1 port.

Point the SDK at it with ``api_url`` and ``sandbox_url`` both set to :attr:`StandIn.url`
and ``http_version="1.1"``: the SDK then sends every envd request to that URL with an
``E2b-Sandbox-Id`` header, which is how the server tells sandboxes apart.

Served (exactly what the Box's E2B backend and the SDK calls under it use):

* control plane: ``POST /v2/sandboxes`` (create), ``DELETE /sandboxes/{id}`` (kill),
  ``POST /sandboxes/{id}/timeout``, ``GET /v2/sandboxes`` (list, filtered by metadata),
  all behind the ``X-API-KEY`` header; a sandbox past its timeout is killed, as E2B does;
* envd process RPCs: ``Start`` (server stream), ``SendInput``, ``CloseStdin``,
  ``SendSignal``;
* envd filesystem RPCs ``ListDir``, ``Stat``, ``MakeDir``, ``Remove``, and the
  ``/files`` download and (multipart) upload endpoints; ``/health``.

Not served: templates, pause/resume/snapshots, ``Connect``/``List``/``Update`` of
processes, PTYs, watchers, ``StreamInput``, octet-stream and gzip uploads, metrics,
logs, volumes, access tokens and signatures. An envd request for a sandbox that does
not exist (killed, expired) gets the proxy's 502 "sandbox ... was not found".

Every request is appended to :attr:`StandIn.log` (route, sandbox id, paths touched),
and :meth:`StandIn.fail_next` makes the next call of a route answer an error, for tests.
"""

from __future__ import annotations

import contextlib
import secrets
import shutil
import tempfile
from collections.abc import AsyncGenerator
from typing import Any

import anyio
from aiohttp import web

from tests.support.e2b_standin.envd import EnvdRoutes
from tests.support.e2b_standin.sandbox import SandboxDir
from tests.support.e2b_standin.state import Logged, SandboxRecord

__all__ = ["ENVD_VERSION", "Logged", "SandboxRecord", "StandIn", "run_standin"]

#: The envd version the stand-in claims (new enough for stdin, close_stdin, defaults).
ENVD_VERSION = "0.5.7"


class StandIn(EnvdRoutes):
    """The served stand-in: create it with :func:`run_standin`."""

    # ------------------------------------------------------------------ control plane

    async def create(self, request: web.Request) -> web.Response:
        self.log.append(Logged("create"))
        denied = self._authorized(request) or self._fault("create")
        if denied is not None:
            return denied
        body: dict[str, Any] = await request.json()
        sandbox_id = "i" + secrets.token_hex(9)
        directory = SandboxDir(self.base, sandbox_id)
        await anyio.to_thread.run_sync(directory.create)
        timeout = int(body.get("timeout", 300))
        record = SandboxRecord(
            sandbox_id=sandbox_id,
            template=str(body.get("templateID", "base")),
            metadata={str(k): str(v) for k, v in dict(body.get("metadata") or {}).items()},
            envs={str(k): str(v) for k, v in dict(body.get("envVars") or {}).items()},
            directory=directory,
            deadline=anyio.current_time() + timeout,
            started_at="2026-01-01T00:00:00Z",
            timeouts=[timeout],
        )
        self.sandboxes[sandbox_id] = record
        self._tg.start_soon(self._expire, record)
        answer = {
            "templateID": record.template,
            "sandboxID": sandbox_id,
            "clientID": "standin",
            "envdVersion": ENVD_VERSION,
        }
        return web.json_response(answer, status=201)

    async def kill_route(self, request: web.Request) -> web.Response:
        sandbox_id = request.match_info["sandbox_id"]
        self.log.append(Logged("kill", sandbox_id))
        denied = self._authorized(request) or self._fault("kill")
        if denied is not None:
            return denied
        record = self.sandboxes.get(sandbox_id)
        if record is None or not record.alive:
            return web.json_response({"code": 404, "message": "not found"}, status=404)
        self.kill(record)
        return web.Response(status=204)

    async def set_timeout(self, request: web.Request) -> web.Response:
        sandbox_id = request.match_info["sandbox_id"]
        self.log.append(Logged("timeout", sandbox_id))
        denied = self._authorized(request) or self._fault("timeout")
        if denied is not None:
            return denied
        record = self.sandboxes.get(sandbox_id)
        if record is None or not record.alive:
            return web.json_response({"code": 404, "message": "not found"}, status=404)
        timeout = int((await request.json())["timeout"])
        record.timeouts.append(timeout)
        record.deadline = anyio.current_time() + timeout
        record.rearm.set()
        return web.Response(status=204)

    async def list_route(self, request: web.Request) -> web.Response:
        self.log.append(Logged("list"))
        denied = self._authorized(request) or self._fault("list")
        if denied is not None:
            return denied
        wanted: dict[str, str] = {}
        for pair in request.query.get("metadata", "").split("&"):
            if "=" in pair:
                key, value = pair.split("=", 1)
                wanted[key] = value
        listed = [
            {
                "templateID": s.template,
                "sandboxID": s.sandbox_id,
                "clientID": "standin",
                "startedAt": s.started_at,
                "endAt": s.started_at,
                "cpuCount": 2,
                "memoryMB": 512,
                "diskSizeMB": 1024,
                "metadata": s.metadata,
                "state": "running",
                "envdVersion": ENVD_VERSION,
            }
            for s in self.alive(**wanted)
        ]
        return web.json_response(listed)

    def app(self) -> web.Application:
        app = web.Application(client_max_size=256 * 1024 * 1024)
        app.router.add_post("/v2/sandboxes", self.create)
        app.router.add_get("/v2/sandboxes", self.list_route)
        app.router.add_delete("/sandboxes/{sandbox_id}", self.kill_route)
        app.router.add_post("/sandboxes/{sandbox_id}/timeout", self.set_timeout)
        app.router.add_post("/process.Process/Start", self.start)
        app.router.add_post("/process.Process/{method}", self.process_call)
        app.router.add_post("/filesystem.Filesystem/{method}", self.filesystem)
        app.router.add_get("/files", self.download)
        app.router.add_post("/files", self.upload)
        app.router.add_get("/health", self.health)
        return app


@contextlib.asynccontextmanager
async def run_standin(api_key: str = "e2b_standin_key") -> AsyncGenerator[StandIn]:
    """Serve a stand-in on a free 127.0.0.1 port until the block ends (then kill all)."""
    base = tempfile.mkdtemp(prefix="lbp-e2b-standin-")
    async with anyio.create_task_group() as tg:
        standin = StandIn(base, tg, api_key)
        runner = web.AppRunner(standin.app(), handle_signals=False, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        standin.url = f"http://127.0.0.1:{port}"
        try:
            yield standin
        finally:
            with anyio.CancelScope(shield=True):
                for record in list(standin.sandboxes.values()):
                    standin.kill(record)
                await runner.cleanup()
                for record in standin.sandboxes.values():
                    for started in list(record.directory.processes.values()):
                        with anyio.move_on_after(5):
                            await started.exited.wait()
                tg.cancel_scope.cancel()
        await anyio.to_thread.run_sync(lambda: shutil.rmtree(base, ignore_errors=True))
