"""``!fz``: the wire fuzzer's hostile plugin (added to a copy of the echo plugin).

``fz emit <base64> ...`` writes each decoded frame, and a newline, straight to the
pipe this worker shares with ``lbp rt``, around the SDK: what a broken or malicious
plugin process can send. ``fz pid`` answers a token of the worker process (its pid is 1 when confined); ``fz surrogate``
returns text the wire cannot carry (cut inside an emoji).
"""

import asyncio
import base64
import fcntl
import os
import select
import stat
import uuid
from collections.abc import AsyncGenerator

from langbot_plugin.api.definition.components.command.command import Command
from langbot_plugin.api.entities.builtin.command.context import CommandReturn, ExecuteContext


def protocol_pipe() -> int:
    """The descriptor of the worker's protocol output: the write-only pipe that is not
    stderr (the worker pointed descriptor 1 at stderr and kept a private duplicate)."""
    stderr = os.fstat(2).st_ino
    for name in sorted(os.listdir("/proc/self/fd"), key=int):
        fd = int(name)
        try:
            info = os.fstat(fd)
            mode = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE
        except OSError:
            continue
        if stat.S_ISFIFO(info.st_mode) and info.st_ino != stderr and mode == os.O_WRONLY:
            return fd
    raise RuntimeError("no protocol pipe")


def write_raw(fd: int, payload: bytes) -> None:
    """Write all of ``payload`` to the pipe behind ``fd``. Its description is the
    worker's own, non-blocking: wait until the pipe takes more. (Reopening it through
    ``/proc/self/fd`` is refused in a confined worker: the runtime owns the pipe.)"""
    view = memoryview(payload)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            select.select([], [fd], [])


class Fz(Command):
    def __init__(self) -> None:
        super().__init__()

        @self.subcommand("emit")
        async def emit(self: Command, context: ExecuteContext) -> AsyncGenerator[CommandReturn]:
            payload = b"".join(base64.b64decode(p) + b"\n" for p in context.crt_params)
            await asyncio.to_thread(write_raw, protocol_pipe(), payload)
            yield CommandReturn(text=f"emitted {len(context.crt_params)}")

        @self.subcommand("pid")
        async def pid(self: Command, context: ExecuteContext) -> AsyncGenerator[CommandReturn]:
            yield CommandReturn(text=os.environ.setdefault("LBP_TEST_PROCESS", uuid.uuid4().hex))

        @self.subcommand("surrogate")
        async def surrogate(
            self: Command, context: ExecuteContext
        ) -> AsyncGenerator[CommandReturn]:
            yield CommandReturn(text="cut inside an emoji: \ud83d")
