"""How an exec's output gets from a container to the runtime (blocking; worker threads).

Two paths, same result (bounded head+tail collectors, a deadline, abortable):

* **FIFOs** (the fast path): when the runtime shares the host with the engine and can
  reach the container's filesystem through ``/proc/<init pid>/root``, it creates two
  named pipes in the container's ``/tmp`` and the command's stdout and stderr go
  straight into them. The runtime reads them directly: no daemon, shim or framing on
  the way, which matters for large outputs. The exec's own (now silent) stream still
  tells when the command ended.
* **The Docker stream**: otherwise, Docker's multiplexed stream is read off the hijacked
  socket and demultiplexed here.

:data:`EXEC_WRAPPER` runs the command inside the wrapper shell (no extra process) after
recording its process group, so a timeout kills exactly that command's group.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import stat
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from box_runtime.output import OutputCollector
from box_runtime.portable import enlarge_pipe
from box_runtime.safe_fs import open_dir

__all__ = [
    "EXEC_WRAPPER",
    "KILL_SCRIPT",
    "Abort",
    "Fifos",
    "Pipes",
    "close_attached",
    "demux_stream",
    "make_pipe",
    "open_dir",
    "open_fifos",
    "pump_fifos",
]

#: $1 = token, $2 = workdir, $3 = command, $4 = non-empty to write into the FIFOs.
#: Docker starts every exec as its own session and process-group leader; the group id is
#: recorded (with the token, against pid reuse) for the kill script.
EXEC_WRAPPER = (
    '[ -n "$4" ] && exec >"/tmp/.lbp-o.$1" 2>"/tmp/.lbp-e.$1" </dev/null; '
    'echo "$$ $1" >/tmp/.lbp-exec 2>/dev/null; '
    'cd "$2" 2>/dev/null || { mkdir -p "$2" && cd "$2"; } || exit 126; '
    '__lbp_c=$3; set --; eval "unset __lbp_c; $__lbp_c"'
)
#: $1 = token. ``kill -- -PGID`` for dash, ``kill -PGID`` for busybox.
KILL_SCRIPT = (
    'read p t </tmp/.lbp-exec && [ "$t" = "$1" ] && '
    '{ kill -s KILL -- -"$p" 2>/dev/null || kill -s KILL -"$p" 2>/dev/null; }'
)
_READ_BYTES = 256 * 1024
_PIPE_BYTES = 1024 * 1024


class Abort:
    """Lets the event loop stop an exec whose worker thread it abandoned."""

    def __init__(self) -> None:
        self.requested = False
        self._sock: socket.socket | None = None
        self._wake: int | None = None
        self._lock = threading.Lock()

    def attach(self, sock: socket.socket) -> None:
        """Shut this socket down when fired."""
        with self._lock:
            self._sock = sock
            if self.requested:
                _shutdown(sock)

    def attach_fd(self, fd: int) -> None:
        """Write a byte to this pipe when fired (wakes a selector)."""
        with self._lock:
            self._wake = fd
            if self.requested:
                _poke(fd)

    def detach_fd(self) -> None:
        with self._lock:
            self._wake = None

    def fire(self) -> None:
        with self._lock:
            self.requested = True
            if self._sock is not None:
                _shutdown(self._sock)
            if self._wake is not None:
                _poke(self._wake)


def _poke(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.write(fd, b"!")


def close_attached(attached: Any) -> None:
    """Close what ``exec_start(socket=True)`` returned, and the socket beneath it.

    Over a unix socket that is a file object around the socket; over TLS the socket
    itself, kept referenced by an HTTP response (``_response``): the descriptor closes
    only with all of them.
    """
    for part in (attached, getattr(attached, "_sock", None), getattr(attached, "_response", None)):
        if part is not None:
            with contextlib.suppress(Exception):
                part.close()


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


# --------------------------------------------------------------------------- the Docker stream


def demux_stream(
    sock: socket.socket,
    *,
    stdout: OutputCollector,
    stderr: OutputCollector,
    deadline: float,
    abort: Abort,
) -> bool:
    """Read Docker's multiplexed stream into the collectors; True when the deadline passed."""
    buffer = bytearray(_READ_BYTES)
    view = memoryview(buffer)
    header = bytearray()
    remaining = 0
    target = stdout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return True
        sock.settimeout(left)
        try:
            count = sock.recv_into(buffer)
        except TimeoutError:
            return True
        except OSError:
            if abort.requested:
                return False
            raise
        if count == 0:
            return False
        pos = 0
        while pos < count:
            if remaining == 0:
                take = min(8 - len(header), count - pos)
                header += view[pos : pos + take]
                pos += take
                if len(header) == 8:
                    target = stderr if header[0] == 2 else stdout
                    remaining = int.from_bytes(header[4:8], "big")
                    header.clear()
                continue
            take = min(remaining, count - pos)
            target.feed(view[pos : pos + take])
            pos += take
            remaining -= take


def _payloads(framed: bytes) -> bytes:
    """The payload bytes of (the complete frames of) a short multiplexed stream."""
    payload = bytearray()
    pos = 0
    while pos + 8 <= len(framed):
        size = int.from_bytes(framed[pos + 4 : pos + 8], "big")
        payload += framed[pos + 8 : pos + 8 + size]
        pos += 8 + size
    return bytes(payload)


# --------------------------------------------------------------------------- FIFOs


def make_pipe(directory: int, name: str) -> tuple[int, int]:
    """Create the named pipe ``name`` in ``directory``; return (reader, writer) fds.

    Both ends are opened without following symlinks and checked to be that very pipe,
    so a sandbox swapping the entry cannot point us at a host file.
    """
    os.mkfifo(name, 0o600, dir_fd=directory)
    reader = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW, dir_fd=directory)
    try:
        info = os.fstat(reader)
        if not stat.S_ISFIFO(info.st_mode):
            raise OSError(f"{name} is not our pipe")
        os.fchmod(reader, 0o666)  # the sandbox user may be anyone
        writer = os.open(name, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW, dir_fd=directory)
        if os.fstat(writer).st_ino != info.st_ino:
            os.close(writer)
            raise OSError(f"{name} changed while it was opened")
    except OSError:
        os.close(reader)
        raise
    enlarge_pipe(reader, _PIPE_BYTES)
    return reader, writer


@dataclass(slots=True)
class Pipes:
    """Named pipes in ``directory``, opened from the host side (:meth:`open`)."""

    directory: int
    names: list[str] = field(default_factory=list[str])
    readers: list[int] = field(default_factory=list[int])
    #: Our own write ends keep the pipes open until the exec's stream says it ended,
    #: so a command that has not opened them yet is never mistaken for one that finished.
    writers: list[int] = field(default_factory=list[int])

    def open(self, name: str) -> int:
        """Create and open the pipe ``name``; its reader (:meth:`close` removes it)."""
        self.names.append(name)
        reader, writer = make_pipe(self.directory, name)
        self.readers.append(reader)
        self.writers.append(writer)
        return reader

    def close_writers(self) -> None:
        while self.writers:
            os.close(self.writers.pop())

    def close(self) -> None:
        """Close every end and remove the pipes (``directory`` stays open)."""
        self.close_writers()
        for fd in self.readers:
            with contextlib.suppress(OSError):
                os.close(fd)
        for name in self.names:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=self.directory)


class Fifos(Pipes):
    """The two pipes of one exec in the container's ``/tmp``, whose fd it owns."""

    def close(self) -> None:
        Pipes.close(self)
        os.close(self.directory)


def open_fifos(container_root: str, token: str) -> Fifos:
    """Create and open ``/tmp/.lbp-{o,e}.<token>`` inside the container (raises OSError)."""
    fifos = Fifos(open_dir(container_root, "tmp"))
    try:
        for name in (f".lbp-o.{token}", f".lbp-e.{token}"):
            fifos.open(name)
    except OSError:
        fifos.close()
        raise
    return fifos


def pump_fifos(
    fifos: Fifos,
    sock: socket.socket,
    *,
    stdout: OutputCollector,
    stderr: OutputCollector,
    deadline: float,
    abort: Abort,
) -> bool:
    """Read both pipes (and the exec's silent stream) until done; True on timeout."""
    selector = selectors.DefaultSelector()
    sock.setblocking(False)
    targets = {fifos.readers[0]: stdout, fifos.readers[1]: stderr}
    for fd in targets:
        selector.register(fd, selectors.EVENT_READ)
    selector.register(sock, selectors.EVENT_READ)
    buffer = bytearray(_READ_BYTES)
    stream_bytes = OutputCollector(4096)  # the wrapper's own complaints, if any
    open_count = 3
    try:
        while open_count:
            left = deadline - time.monotonic()
            if left <= 0:
                return True
            for key, _ in selector.select(left):
                if key.fileobj is sock:
                    try:
                        count = sock.recv_into(buffer)
                    except (BlockingIOError, InterruptedError):
                        continue
                    except OSError:
                        count = 0
                    if count:
                        stream_bytes.feed(memoryview(buffer)[:count])
                        continue
                    # The command ended: drop our write ends so the pipes reach EOF
                    # once nothing inside writes to them any more.
                    selector.unregister(sock)
                    fifos.close_writers()
                    open_count -= 1
                    if abort.requested:
                        return False
                    continue
                fd = key.fd
                try:
                    count = os.readv(fd, [buffer])
                except (BlockingIOError, InterruptedError):
                    continue
                if count == 0:
                    selector.unregister(fd)
                    open_count -= 1
                    continue
                targets[fd].feed(memoryview(buffer)[:count])
        if stream_bytes.total:
            stderr.feed(_payloads(stream_bytes.result().text.encode("utf-8", "replace")))
        return False
    finally:
        selector.close()
