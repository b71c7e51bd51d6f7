"""envd as the stand-in serves it: process RPCs, filesystem RPCs, ``/files``, ``/health``.

The process and filesystem calls speak Connect with the SDK's own generated messages
(:mod:`.connect`); a process's output is streamed as it comes, and a sandbox killed
while one streams ends it with the proxy's "sandbox ... was not found".
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import urllib.parse
from typing import Any, Literal

import anyio
from aiohttp import web

from tests.support.e2b_standin.connect import (
    ConnectFailure,
    end_stream,
    envelope,
    error_response,
    read_envelope,
)
from tests.support.e2b_standin.files import entry_of, list_dir, make_dirs, remove, write_file
from tests.support.e2b_standin.sandbox import PathRefused, StandinProcess
from tests.support.e2b_standin.state import Logged, SandboxRecord, StandInState

__all__ = ["EnvdRoutes"]

_READ = 65536
_FILENAME = re.compile(r'filename="([^"]*)"')


def multipart_files(body: bytes, content_type: str) -> list[tuple[str, bytes]]:
    """The ``(filename, content)`` parts of a ``multipart/form-data`` upload.

    Parsed here, not with aiohttp's reader: that one drops a filename's leading "/"
    (the SDK sends sandbox paths as filenames) and warns on some chunk boundaries.
    """
    found = re.search(r'boundary="?([^";]+)"?', content_type)
    if found is None:
        raise ConnectFailure("invalid_argument", "not a multipart upload")
    files: list[tuple[str, bytes]] = []
    for part in body.split(b"--" + found.group(1).encode())[1:]:
        if part.startswith(b"--"):
            break
        head, _, data = part.removeprefix(b"\r\n").partition(b"\r\n\r\n")
        named = _FILENAME.search(head.decode("utf-8", "replace"))
        files.append(
            (urllib.parse.unquote(named.group(1)) if named else "", data.removesuffix(b"\r\n"))
        )
    return files


class EnvdRoutes(StandInState):
    """The envd routes (the control plane's are in :mod:`.server`)."""

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
                    list_dir, directory, directory.host_path(listing.path, user), listing.depth
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
                entry = await anyio.to_thread.run_sync(entry_of, directory, host)
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
                await anyio.to_thread.run_sync(make_dirs, host, directory.owner(user))
                return web.Response(
                    body=filesystem_pb.MakeDirResponse(
                        entry=await anyio.to_thread.run_sync(entry_of, directory, host)
                    ).to_json(),
                    content_type="application/json",
                )
            if method == "Remove":
                removed = filesystem_pb.RemoveRequest.from_json(
                    body.decode(), ignore_unknown_fields=True
                )
                self.log.append(Logged("remove", record.sandbox_id, (removed.path,)))
                await anyio.to_thread.run_sync(remove, directory.host_path(removed.path, user))
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
        received: list[tuple[str, bytes]] = []
        try:
            parts = multipart_files(await request.read(), request.headers.get("Content-Type", ""))
        except ConnectFailure as failure:
            return web.json_response({"code": 400, "message": failure.message}, status=400)
        for filename, data in parts:
            try:
                host = found.directory.host_path(filename or request.query.get("path", ""), user)
            except PathRefused as exc:
                return web.json_response({"code": 403, "message": str(exc)}, status=403)
            received.append((host, data))

        def write_all() -> None:
            for host, data in received:
                write_file(host, data, owner)

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

    async def pump(stream: Any, which: Literal["stdout", "stderr"]) -> None:
        if stream is None:
            return
        while True:
            try:
                chunk = await stream.receive(_READ)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                return
            data = process_pb.ProcessEvent.DataEvent(
                output=Oneof("stdout", chunk) if which == "stdout" else Oneof("stderr", chunk)
            )
            await send(Oneof("data", data))

    process = started.process
    await send(Oneof("start", process_pb.ProcessEvent.StartEvent(pid=started.pid)))
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(pump, process.stdout, "stdout")
            tg.start_soon(pump, process.stderr, "stderr")
            await process.wait()
    finally:
        started.exit_code = process.returncode
        started.exited.set()
        record.directory.processes.pop(started.pid, None)
    if not record.alive:
        failure = ConnectFailure("unavailable", f"The sandbox {record.sandbox_id} was not found")
        with contextlib.suppress(ConnectionError, RuntimeError):
            await response.write(end_stream(failure))
        return
    code = process.returncode
    assert code is not None
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
