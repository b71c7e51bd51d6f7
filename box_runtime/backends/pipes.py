"""Byte streams over non-blocking pipe descriptors, driven by the event loop.

A managed process's stdio carries one message per line in each direction, a round
trip at a time: what costs is the number of times the event loop has to run, not the
bytes. These streams read and write the descriptor at once and wait (for readability
or writability) only when the kernel says so: a write that fits in the pipe returns
without yielding, a read of data already there does not wait.

:func:`pipe_pair` makes a pipe whose far end is handed to a child process.
"""

from __future__ import annotations

import os

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

from box_runtime.portable import enlarge_pipe

__all__ = ["PipeReceiveStream", "PipeSendStream", "pipe_pair"]

PIPE_BYTES = 1024 * 1024


def pipe_pair(*, child_reads: bool) -> tuple[int, int]:
    """``(our end, the child's end)`` of a new pipe; our end is non-blocking.

    ``child_reads``: the child reads (its stdin) and we write, else the reverse. The
    pipe is enlarged to 1 MiB where the kernel allows, for big messages.
    """
    read_end, write_end = os.pipe()
    ours, theirs = (write_end, read_end) if child_reads else (read_end, write_end)
    os.set_blocking(ours, False)
    enlarge_pipe(ours, PIPE_BYTES)
    return ours, theirs


class _PipeEnd:
    """Our end of a pipe; closing it tells the event loop first."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    async def aclose(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            anyio.notify_closing(fd)
            os.close(fd)


class PipeReceiveStream(_PipeEnd, ByteReceiveStream):
    async def receive(self, max_bytes: int = 65536) -> bytes:
        while True:
            fd = self._fd
            if fd is None:
                raise anyio.ClosedResourceError
            try:
                data = os.read(fd, max_bytes)
            except BlockingIOError:
                await anyio.wait_readable(fd)
                continue
            except OSError as exc:
                raise anyio.BrokenResourceError from exc
            if not data:
                raise anyio.EndOfStream
            return data


class PipeSendStream(_PipeEnd, ByteSendStream):
    def send_nowait(self, item: bytes) -> int:
        """Write what the pipe takes now; return how many bytes (0 when full or closed)."""
        fd = self._fd
        if fd is None:
            return 0
        try:
            return os.write(fd, item)
        except OSError:  # full (EAGAIN) or gone (EPIPE): the queued path reports it
            return 0

    async def send(self, item: bytes) -> None:
        view = memoryview(item)
        while view:
            fd = self._fd
            if fd is None:
                raise anyio.ClosedResourceError
            try:
                written = os.write(fd, view)
            except BlockingIOError:
                await anyio.wait_writable(fd)
                continue
            except OSError as exc:  # EPIPE: the reader is gone
                raise anyio.BrokenResourceError from exc
            view = view[written:]
