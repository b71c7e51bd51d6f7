"""A managed process in a Docker container: ``docker exec`` attached with stdin.

One ``exec_create`` (stdin, stdout and stderr attached, no TTY) and ``exec_start``
with a hijacked socket, both through the Docker SDK in a worker thread; from then on
the socket is driven by the event loop, without threads:

* stdin is written to the socket; closing it half-closes the socket, and Docker closes
  the process's stdin;
* stdout and stderr come back multiplexed (8-byte frame headers); :meth:`pump`
  demultiplexes them into two bounded channels, so a slow reader of stdout stops the
  socket being read (Docker then stops the process's writes) and nothing is dropped;
* the end of the stream means the process ended; its status comes from
  ``exec_inspect``.

:data:`PROCESS_WRAPPER` records the process's pid (it ``exec``\\ s the command, so pid and
process group are the command's: Docker makes every exec a session leader) in
``/tmp/.lbp-proc-<name>.pid``; signals go to that group through a short ``docker exec``
of :data:`SIGNAL_SCRIPT`.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import ssl
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from anyio.abc import ByteSendStream
from docker import errors as docker_errors  # type: ignore[import-untyped]

from box_runtime.backends.base import ProcessRequest, SpawnedProcess
from box_runtime.backends.streams import ChunkSendStream, chunk_channel
from box_runtime.errors import BoxBackendUnavailableError, BoxSandboxGoneError

__all__ = ["PROCESS_WRAPPER", "SIGNAL_SCRIPT", "DockerProcess", "spawn_process"]

logger = logging.getLogger("box_runtime.docker")

#: $1 = pid file, $2 = working directory, then the command and its arguments.
PROCESS_WRAPPER = (
    'f=$1; w=$2; shift 2; echo "$$" >"$f" 2>/dev/null; '
    'cd "$w" 2>/dev/null || { mkdir -p "$w" && cd "$w"; } '
    '|| { echo "lbp box: cannot enter $w" >&2; exit 126; }; '
    'exec "$@"'
)
#: $1 = pid file, $2 = signal name. ``kill -- -PGID`` for dash, ``kill -PGID`` for busybox.
SIGNAL_SCRIPT = (
    'read p <"$1" 2>/dev/null && [ "$p" -gt 1 ] 2>/dev/null || exit 0; '
    'kill -s "$2" -- -"$p" 2>/dev/null || kill -s "$2" -"$p" 2>/dev/null '
    '|| kill -s "$2" "$p" 2>/dev/null; exit 0'
)
_READ_BYTES = 256 * 1024
_HEADER = 8
_WOULD_BLOCK = (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError)

Run = Callable[..., Awaitable[Any]]


def _explain(exc: BaseException) -> str:
    return str(getattr(exc, "explanation", None) or exc)


def _start_blocking(api: Any, handle: str, request: ProcessRequest, pid_file: str) -> Any:
    command = ["sh", "-c", PROCESS_WRAPPER, "sh", pid_file, request.cwd, *request.argv]
    try:
        exec_id = api.exec_create(
            handle,
            command,
            stdin=True,
            stdout=True,
            stderr=True,
            tty=False,
            environment=[f"{name}={value}" for name, value in request.env.items()],
        )["Id"]
        return exec_id, api.exec_start(exec_id, socket=True)
    except docker_errors.NotFound:
        raise BoxSandboxGoneError(f"container {handle[:12]} is gone") from None
    except docker_errors.APIError as exc:
        if exc.status_code == 409:
            raise BoxSandboxGoneError(f"container {handle[:12]} is not running") from None
        raise BoxBackendUnavailableError(f"docker exec failed: {_explain(exc)}") from None
    except docker_errors.DockerException as exc:
        raise BoxBackendUnavailableError(f"docker exec failed: {_explain(exc)}") from None


def _exit_code_blocking(api: Any, exec_id: str) -> int | None:
    for _ in range(500):
        try:
            state = api.exec_inspect(exec_id)
        except docker_errors.DockerException:
            return None
        if not state.get("Running"):
            code = state.get("ExitCode")
            return int(code) if code is not None else None
        time.sleep(0.002)  # the stream ended a moment before Docker recorded the exit
    return None


def _signal_blocking(api: Any, handle: str, pid_file: str, signum: int) -> None:
    name = signal.Signals(signum).name.removeprefix("SIG")
    try:
        exec_id = api.exec_create(handle, ["sh", "-c", SIGNAL_SCRIPT, "lbp-signal", pid_file, name])
        api.exec_start(exec_id["Id"])
    except docker_errors.DockerException as exc:
        logger.debug("Box: signalling a process in %s failed: %s", handle[:12], exc)


class _SocketStdin(ByteSendStream):
    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._closed = False

    async def send(self, item: bytes) -> None:
        view = memoryview(item)
        while view:
            if self._closed:
                raise anyio.ClosedResourceError
            try:
                sent = self._sock.send(view)
            except _WOULD_BLOCK:
                await anyio.wait_writable(self._sock)
                continue
            except OSError as exc:
                raise anyio.BrokenResourceError from exc
            view = view[sent:]

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_WR)


class DockerProcess(SpawnedProcess):
    """The attached exec of one managed process."""

    def __init__(
        self, api: Any, run: Run, *, handle: str, exec_id: str, response: Any, pid_file: str
    ) -> None:
        self._api = api
        self._run = run
        self._handle = handle
        self._exec_id = exec_id
        self._response = response
        self._pid_file = pid_file
        self._sock: socket.socket = getattr(response, "_sock", response)
        self._sock.setblocking(False)
        self.stdin = _SocketStdin(self._sock)
        self._out, self.stdout = chunk_channel()
        self._err, self.stderr = chunk_channel()
        self._ended = anyio.Event()

    async def pump(self) -> None:
        """Demultiplex the stream into stdout and stderr until it ends."""
        try:
            await self._demux()
        finally:
            self._ended.set()
            await self._out.aclose()
            await self._err.aclose()

    async def _recv(self, buffer: bytearray) -> int:
        while True:
            try:
                return self._sock.recv_into(buffer)
            except _WOULD_BLOCK:
                await anyio.wait_readable(self._sock)
            except OSError:
                return 0

    async def _demux(self) -> None:
        buffer = bytearray(_READ_BYTES)
        pending = bytearray()
        target: ChunkSendStream | None = None
        remaining = 0
        while True:
            count = await self._recv(buffer)
            if count == 0:
                return
            pending += memoryview(buffer)[:count]
            position = 0
            while position < len(pending):
                if remaining == 0:
                    if len(pending) - position < _HEADER:
                        break
                    header = pending[position : position + _HEADER]
                    target = self._err if header[0] == 2 else self._out
                    remaining = int.from_bytes(header[4:8], "big")
                    position += _HEADER
                    continue
                take = min(remaining, len(pending) - position)
                payload = bytes(pending[position : position + take])
                position += take
                remaining -= take
                if target is not None:
                    try:
                        await target.send(payload)
                    except anyio.BrokenResourceError:
                        target = None  # nobody reads that stream any more: skip its bytes
            del pending[:position]

    async def wait(self) -> int | None:
        await self._ended.wait()
        return await self._run(_exit_code_blocking, self._api, self._exec_id)

    async def signal(self, signum: int) -> None:
        await self._run(_signal_blocking, self._api, self._handle, self._pid_file, signum)

    async def aclose(self) -> None:
        for stream in (self._out, self.stdout, self._err, self.stderr):
            await stream.aclose()
        with contextlib.suppress(OSError):
            self._sock.close()
        with contextlib.suppress(Exception):
            self._response.close()


async def spawn_process(api: Any, run: Run, handle: str, request: ProcessRequest) -> DockerProcess:
    """Start ``request`` in container ``handle`` (``run`` runs a blocking call in a thread)."""
    pid_file = f"/tmp/.lbp-proc-{request.name}.pid"
    exec_id, response = await run(_start_blocking, api, handle, request, pid_file)
    return DockerProcess(
        api, run, handle=handle, exec_id=exec_id, response=response, pid_file=pid_file
    )
