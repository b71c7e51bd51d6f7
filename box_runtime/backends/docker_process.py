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
from collections import deque
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream
from docker import errors as docker_errors  # type: ignore[import-untyped]

from box_runtime.backends.base import ProcessRequest, SpawnedProcess
from box_runtime.backends.docker_errors import EngineConflictError
from box_runtime.backends.docker_io import close_attached
from box_runtime.errors import BoxSandboxGoneError

__all__ = [
    "PROCESS_WRAPPER",
    "SIGNAL_SCRIPT",
    "DockerProcess",
    "pid_file_of",
    "signal_blocking",
    "spawn_process",
]

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
#: stderr set aside while stdout is read, at most (then reading waits for the stderr reader).
_STDERR_QUEUE_BYTES = 256 * 1024
#: How often an exec whose stream has not ended is checked for having exited.
_EXIT_POLL_SEC = 5.0
_WOULD_BLOCK = (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError)

Run = Callable[..., Awaitable[Any]]
#: The backend's ``_engine(action, container)``: engine errors become Box errors.
Engine = Callable[[str, str], AbstractContextManager[None]]


def _start_blocking(
    api: Any, engine: Engine, handle: str, request: ProcessRequest, pid_file: str
) -> Any:
    command = ["sh", "-c", PROCESS_WRAPPER, "sh", pid_file, request.cwd, *request.argv]
    try:
        with engine("exec", handle):
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
    except EngineConflictError:  # the container exists but is not running
        raise BoxSandboxGoneError(f"container {handle[:12]} is not running") from None


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


def _running_blocking(api: Any, exec_id: str) -> bool:
    try:
        return bool(api.exec_inspect(exec_id).get("Running"))
    except docker_errors.DockerException:
        return False


def signal_blocking(api: Any, handle: str, pid_file: str, signum: int) -> None:
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

    def send_nowait(self, item: bytes) -> int:
        """Write what the socket takes now; return how many bytes."""
        if self._closed:
            return 0
        try:
            return self._sock.send(item)
        except OSError:  # would block, or gone: the queued path reports it
            return 0

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


class _Demux:
    """Docker's multiplexed stream, pulled by whoever reads stdout; stderr set aside.

    Reading stdout reads the socket; stderr frames met on the way go to a bounded side
    queue the stderr reader drains. So the stream moves only as fast as stdout is
    read (a slow client slows the process, nothing is dropped), without a task of its
    own and without a hop through a channel per chunk.
    """

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._buffer = bytearray(_READ_BYTES)
        self._pending = bytearray()
        self._position = 0
        self._stream = 1
        self._remaining = 0
        self.ended = anyio.Event()
        self._stderr: deque[bytes] = deque()
        self._stderr_bytes = 0
        self._stderr_changed: anyio.Event | None = None

    def _notify(self) -> None:
        changed, self._stderr_changed = self._stderr_changed, None
        if changed is not None:
            changed.set()

    async def _wait(self) -> None:
        if self._stderr_changed is None:
            self._stderr_changed = anyio.Event()
        await self._stderr_changed.wait()

    def _take(self, max_bytes: int) -> tuple[int, bytes] | None:
        """The next payload piece already received: ``(stream, bytes)``."""
        pending = self._pending
        while True:
            if self._remaining == 0:
                if len(pending) - self._position < _HEADER:
                    del pending[: self._position]
                    self._position = 0
                    return None
                header = pending[self._position : self._position + _HEADER]
                self._stream = header[0]
                self._remaining = int.from_bytes(header[4:8], "big")
                self._position += _HEADER
                continue
            available = len(pending) - self._position
            if available == 0:
                pending.clear()
                self._position = 0
                return None
            take = min(self._remaining, available, max_bytes)
            data = bytes(pending[self._position : self._position + take])
            self._position += take
            self._remaining -= take
            return self._stream, data

    async def _fill(self) -> bool:
        """Receive more of the stream; False at its end."""
        while True:
            try:
                count = self._sock.recv_into(self._buffer)
            except _WOULD_BLOCK:
                await anyio.wait_readable(self._sock)
                continue
            except OSError:
                count = 0
            if count == 0:
                self.ended.set()
                self._notify()
                return False
            self._pending += memoryview(self._buffer)[:count]
            return True

    async def stdout(self, max_bytes: int) -> bytes:
        while True:
            piece = self._take(max_bytes)
            if piece is None:
                if self.ended.is_set() or not await self._fill():
                    raise anyio.EndOfStream
                continue
            stream, data = piece
            if stream != 2:
                return data
            while self._stderr_bytes > _STDERR_QUEUE_BYTES:
                await self._wait()
            self._stderr.append(data)
            self._stderr_bytes += len(data)
            self._notify()

    async def stderr(self) -> bytes:
        while not self._stderr:
            if self.ended.is_set():
                raise anyio.EndOfStream
            await self._wait()
        data = self._stderr.popleft()
        self._stderr_bytes -= len(data)
        self._notify()
        return data


class _DemuxStream(ByteReceiveStream):
    def __init__(self, demux: _Demux, *, stderr: bool) -> None:
        self._demux = demux
        self._is_stderr = stderr

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if self._is_stderr:
            return await self._demux.stderr()
        return await self._demux.stdout(max_bytes)

    async def aclose(self) -> None:
        pass


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
        stdin = _SocketStdin(self._sock)
        self.stdin = stdin
        self.send_nowait = stdin.send_nowait
        self._demux = _Demux(self._sock)
        self.stdout = _DemuxStream(self._demux, stderr=False)
        self.stderr = _DemuxStream(self._demux, stderr=True)

    async def wait(self) -> int | None:
        """The stream's end means the exec ended; a process whose output nobody drains is
        found exited by looking every few seconds."""
        while not self._demux.ended.is_set():
            with anyio.move_on_after(_EXIT_POLL_SEC):
                await self._demux.ended.wait()
            if not self._demux.ended.is_set():
                running = await self._run(_running_blocking, self._api, self._exec_id)
                if not running:
                    break
        return await self._run(_exit_code_blocking, self._api, self._exec_id)

    async def signal(self, signum: int) -> None:
        await self._run(signal_blocking, self._api, self._handle, self._pid_file, signum)

    async def aclose(self) -> None:
        close_attached(self._response)


def pid_file_of(request: ProcessRequest) -> str:
    """Where the process's wrapper records its pid (for signals to its group)."""
    return f"/tmp/.lbp-proc-{request.name}.pid"


async def spawn_process(
    api: Any, run: Run, engine: Engine, handle: str, request: ProcessRequest
) -> DockerProcess:
    """Start ``request`` in container ``handle`` (``run`` runs a blocking call in a thread;
    ``engine`` is the backend's error-mapping edge)."""
    pid_file = pid_file_of(request)
    exec_id, response = await run(_start_blocking, api, engine, handle, request, pid_file)
    return DockerProcess(
        api, run, handle=handle, exec_id=exec_id, response=response, pid_file=pid_file
    )
