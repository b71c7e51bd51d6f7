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

import base64
import contextlib
import os
import re
import secrets
import signal
import stat
import tempfile
import urllib.parse
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anyio
from aiohttp import web
from anyio.abc import TaskGroup

from tests.support.e2b_standin.connect import (
    ConnectFailure,
    end_stream,
    envelope,
    error_response,
    read_envelope,
)
from tests.support.e2b_standin.sandbox import PathRefused, SandboxDir, StandinProcess

__all__ = ["ENVD_VERSION", "Logged", "SandboxRecord", "StandIn", "run_standin"]

#: The envd version the stand-in claims (new enough for stdin, close_stdin, defaults).
ENVD_VERSION = "0.5.7"
_READ = 65536
_FILENAME = re.compile(r'filename="([^"]*)"')


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


class StandIn:
    """The server's state; create it with :func:`run_standin`."""

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

    # ------------------------------------------------------------------ envd: processes

    async def start(self, request: web.Request) -> web.StreamResponse:
        from e2b.envd.process import process_pb

        found = self._sandbox(request)
        if isinstance(found, web.Response):
            return found
        self.log.append(Logged("start", found.sandbox_id))
        fault = self._fault("start")
        if fault is not None:
            return fault
        try:
            started_request = read_envelope(await request.read(), process_pb.StartRequest)
        except ConnectFailure as failure:
            return error_response(failure)
        config = started_request.process or process_pb.ProcessConfig()
        response = web.StreamResponse(headers={"Content-Type": "application/connect+json"})
        await response.prepare(request)
        try:
            started = await found.directory.start(
                config.cmd,
                list(config.args),
                {**found.envs, **dict(config.envs)},
                config.cwd if config.has_field("cwd") else None,
                user=self._user(request),
                stdin=started_request.stdin,
                tag=started_request.tag if started_request.has_field("tag") else None,
            )
        except OSError as exc:
            await response.write(end_stream(ConnectFailure("internal", str(exc))))
            return response
        await _stream_process(found, started, response)
        return response

    async def _unary(
        self, request: web.Request, route: str
    ) -> tuple[SandboxRecord, Any] | web.Response:
        found = self._sandbox(request)
        if isinstance(found, web.Response):
            return found
        body = await request.read()
        fault = self._fault(route)
        if fault is not None:
            return fault
        return found, body

    def _process(self, record: SandboxRecord, selector: Any) -> StandinProcess:
        pid = selector.selector.value if selector is not None and selector.selector else 0
        started = record.directory.processes.get(int(pid))
        if started is None or started.exited.is_set():
            raise ConnectFailure("not_found", f"process with pid {pid} not found")
        return started

    async def process_call(self, request: web.Request) -> web.Response:
        """``SendInput``, ``CloseStdin`` and ``SendSignal``: unary calls on one process."""
        from e2b.envd.process import process_pb

        calls: dict[str, tuple[str, Any, Any]] = {
            "SendInput": ("send_input", process_pb.SendInputRequest, self._send_input),
            "CloseStdin": ("close_stdin", process_pb.CloseStdinRequest, self._close_stdin),
            "SendSignal": ("send_signal", process_pb.SendSignalRequest, self._send_signal),
        }
        call = calls.get(request.match_info["method"])
        if call is None:
            return error_response(ConnectFailure("unimplemented", "not served"))
        route, message_class, handler = call
        got = await self._unary(request, route)
        if isinstance(got, web.Response):
            return got
        record, body = got
        message = message_class.from_json(body.decode(), ignore_unknown_fields=True)
        self.log.append(Logged(route, record.sandbox_id))
        try:
            await handler(record, self._process(record, message.process), message)
        except ConnectFailure as failure:
            return error_response(failure)
        return web.json_response({})

    @staticmethod
    async def _send_input(record: SandboxRecord, started: StandinProcess, message: Any) -> None:
        del record
        stdin = started.process.stdin
        if stdin is None or not started.stdin_open:
            raise ConnectFailure("failed_precondition", "stdin is not open")
        data = message.input.input.value if message.input and message.input.input else b""
        try:
            await stdin.send(bytes(data))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            raise ConnectFailure("failed_precondition", f"stdin: {exc}") from None

    @staticmethod
    async def _close_stdin(record: SandboxRecord, started: StandinProcess, message: Any) -> None:
        del record, message
        if started.process.stdin is not None and started.stdin_open:
            started.stdin_open = False
            with contextlib.suppress(OSError, anyio.BrokenResourceError):
                await started.process.stdin.aclose()

    @staticmethod
    async def _send_signal(record: SandboxRecord, started: StandinProcess, message: Any) -> None:
        from e2b.envd.process import process_pb

        kill = message.signal == process_pb.Signal.SIGKILL
        record.directory.signal(started.pid, signal.SIGKILL if kill else signal.SIGTERM)

    # ------------------------------------------------------------------ envd: filesystem

    async def filesystem(self, request: web.Request) -> web.Response:
        from e2b.envd.filesystem import filesystem_pb

        method = request.match_info["method"]
        got = await self._unary(request, method.lower())
        if isinstance(got, web.Response):
            return got
        record, body = got
        user = self._user(request)
        directory = record.directory
        try:
            if method == "ListDir":
                listing = filesystem_pb.ListDirRequest.from_json(
                    body.decode(), ignore_unknown_fields=True
                )
                self.log.append(Logged("list_dir", record.sandbox_id, (listing.path,)))
                entries = await anyio.to_thread.run_sync(
                    _list_dir, directory, directory.host_path(listing.path, user), listing.depth
                )
                return web.Response(
                    body=filesystem_pb.ListDirResponse(entries=entries).to_json(),
                    content_type="application/json",
                )
            if method == "Stat":
                asked = filesystem_pb.StatRequest.from_json(
                    body.decode(), ignore_unknown_fields=True
                )
                self.log.append(Logged("stat", record.sandbox_id, (asked.path,)))
                host = directory.host_path(asked.path, user)
                entry = await anyio.to_thread.run_sync(_entry, directory, host)
                return web.Response(
                    body=filesystem_pb.StatResponse(entry=entry).to_json(),
                    content_type="application/json",
                )
            if method == "MakeDir":
                made = filesystem_pb.MakeDirRequest.from_json(
                    body.decode(), ignore_unknown_fields=True
                )
                self.log.append(Logged("make_dir", record.sandbox_id, (made.path,)))
                host = directory.host_path(made.path, user)
                if await anyio.Path(host).is_dir():
                    raise ConnectFailure("already_exists", f"{made.path} exists")
                await anyio.to_thread.run_sync(_make_dirs, host, directory.owner(user))
                return web.Response(
                    body=filesystem_pb.MakeDirResponse(
                        entry=await anyio.to_thread.run_sync(_entry, directory, host)
                    ).to_json(),
                    content_type="application/json",
                )
            if method == "Remove":
                removed = filesystem_pb.RemoveRequest.from_json(
                    body.decode(), ignore_unknown_fields=True
                )
                self.log.append(Logged("remove", record.sandbox_id, (removed.path,)))
                await anyio.to_thread.run_sync(_remove, directory.host_path(removed.path, user))
                return web.json_response({})
        except PathRefused as exc:
            return error_response(ConnectFailure("permission_denied", str(exc)))
        except FileNotFoundError as exc:
            return error_response(ConnectFailure("not_found", f"path not found: {exc}"))
        except ConnectFailure as failure:
            return error_response(failure)
        return error_response(ConnectFailure("unimplemented", f"{method} is not served"))

    async def download(self, request: web.Request) -> web.StreamResponse:
        found = self._sandbox(request)
        if isinstance(found, web.Response):
            return found
        path = request.query.get("path", "")
        self.log.append(Logged("download", found.sandbox_id, (path,)))
        fault = self._fault("download")
        if fault is not None:
            return fault
        try:
            host = found.directory.host_path(path, self._user(request))
            data = await anyio.Path(host).read_bytes()
        except PathRefused as exc:
            return web.json_response({"code": 403, "message": str(exc)}, status=403)
        except (FileNotFoundError, NotADirectoryError):
            return web.json_response({"code": 404, "message": f"path {path} not found"}, status=404)
        except IsADirectoryError:
            return web.json_response({"code": 400, "message": f"{path} is a directory"}, status=400)
        return web.Response(body=data, content_type="application/octet-stream")

    async def upload(self, request: web.Request) -> web.Response:
        found = self._sandbox(request)
        if isinstance(found, web.Response):
            return found
        fault = self._fault("upload")
        if fault is not None:
            return fault
        user = self._user(request)
        owner = found.directory.owner(user)
        reader = await request.multipart()
        received: list[tuple[str, bytes]] = []
        async for part in reader:
            # The raw filename (the sandbox path): aiohttp's parser drops a leading "/".
            raw = _FILENAME.search(part.headers.get("Content-Disposition", ""))
            name = urllib.parse.unquote(raw.group(1)) if raw else request.query.get("path", "")
            data = await part.read()  # type: ignore[union-attr]
            try:
                host = found.directory.host_path(name, user)
            except PathRefused as exc:
                return web.json_response({"code": 403, "message": str(exc)}, status=403)
            received.append((host, bytes(data)))

        def write_all() -> None:
            for host, data in received:
                _write_file(host, data, owner)

        await anyio.to_thread.run_sync(write_all)
        written = [
            {"name": os.path.basename(h), "type": "file", "path": found.directory.sandbox_path(h)}
            for h, _ in received
        ]
        self.log.append(Logged("upload", found.sandbox_id, tuple(w["path"] for w in written)))
        return web.json_response(written)

    async def health(self, request: web.Request) -> web.Response:
        found = self._sandbox(request)
        return found if isinstance(found, web.Response) else web.Response(status=204)

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


async def _stream_process(
    record: SandboxRecord, started: StandinProcess, response: web.StreamResponse
) -> None:
    """Send the start event, the output as it comes, then the end event."""
    from e2b.envd.process import process_pb
    from protobuf import Oneof

    lock = anyio.Lock()
    connected = True

    async def send(event: Any) -> None:
        nonlocal connected
        if not connected:
            return
        payload = process_pb.StartResponse(event=process_pb.ProcessEvent(event=event)).to_json()
        async with lock:
            try:
                await response.write(envelope(payload.encode()))
            except (ConnectionError, RuntimeError):
                connected = False  # the client went away; the process keeps running

    async def pump(stream: Any, which: str) -> None:
        if stream is None:
            return
        while True:
            try:
                chunk = await stream.receive(_READ)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                return
            data = process_pb.ProcessEvent.DataEvent(output=Oneof(which, chunk))
            await send(Oneof("data", data))

    process = started.process
    await send(Oneof("start", process_pb.ProcessEvent.StartEvent(pid=started.pid)))
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(pump, process.stdout, "stdout")
            tg.start_soon(pump, process.stderr, "stderr")
            code = await process.wait()
    finally:
        started.exit_code = process.returncode
        started.exited.set()
        record.directory.processes.pop(started.pid, None)
    if not record.alive:
        failure = ConnectFailure("unavailable", f"The sandbox {record.sandbox_id} was not found")
        with contextlib.suppress(ConnectionError, RuntimeError):
            await response.write(end_stream(failure))
        return
    if code < 0:
        end = process_pb.ProcessEvent.EndEvent(
            exit_code=-1, exited=False, status=f"signal: {signal.Signals(-code).name.lower()[3:]}"
        )
    else:
        end = process_pb.ProcessEvent.EndEvent(
            exit_code=code, exited=True, status=f"exit status {code}"
        )
    await send(Oneof("end", end))
    with contextlib.suppress(ConnectionError, RuntimeError):
        await response.write(end_stream())


def _file_type(mode: int) -> Any:
    from e2b.envd.filesystem import filesystem_pb

    if stat.S_ISDIR(mode):
        return filesystem_pb.FileType.DIRECTORY
    if stat.S_ISREG(mode):
        return filesystem_pb.FileType.FILE
    return filesystem_pb.FileType.UNSPECIFIED


def _entry(directory: SandboxDir, host: str) -> Any:
    from e2b.envd.filesystem import filesystem_pb
    from protobuf.wkt import Timestamp

    info = os.lstat(host)
    is_link = stat.S_ISLNK(info.st_mode)
    target = os.stat(host) if is_link and os.path.exists(host) else info
    return filesystem_pb.EntryInfo(
        name=os.path.basename(host),
        type=_file_type(target.st_mode),
        path=directory.sandbox_path(host),
        size=target.st_size,
        mode=stat.S_IMODE(info.st_mode),
        permissions=stat.filemode(info.st_mode),
        owner="user" if info.st_uid == 1000 else "root",
        group="user" if info.st_gid == 1000 else "root",
        modified_time=Timestamp.from_nanos(info.st_mtime_ns),
        is_symlink=is_link,
    )


def _list_dir(directory: SandboxDir, host: str, depth: int) -> list[Any]:
    if not os.path.isdir(host):
        raise FileNotFoundError(directory.sandbox_path(host))
    entries: list[Any] = []
    limit = depth or 1
    pending = [(host, 1)]
    while pending:
        current, level = pending.pop()
        for item in sorted(os.scandir(current), key=lambda e: e.name):
            entries.append(_entry(directory, item.path))
            if level < limit and item.is_dir(follow_symlinks=False):
                pending.append((item.path, level + 1))
    return entries


def _make_dirs(host: str, owner: int) -> None:
    missing: list[str] = []
    path = host
    while not os.path.exists(path):
        missing.append(path)
        path = os.path.dirname(path)
    for path in reversed(missing):
        os.mkdir(path)
        os.chown(path, owner, owner)


def _write_file(host: str, data: bytes, owner: int) -> None:
    _make_dirs(os.path.dirname(host), owner)
    with open(host, "wb") as file:
        file.write(data)
    os.chown(host, owner, owner)


def _remove(host: str) -> None:
    import shutil

    if os.path.isdir(host) and not os.path.islink(host):
        shutil.rmtree(host)
    else:
        os.unlink(host)


@contextlib.asynccontextmanager
async def run_standin(api_key: str = "e2b_standin_key") -> AsyncIterator[StandIn]:
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
        await anyio.to_thread.run_sync(
            lambda: __import__("shutil").rmtree(base, ignore_errors=True)
        )
