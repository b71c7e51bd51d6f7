"""Reading a child's stderr line by line and waiting (bounded) for a line to appear."""

from __future__ import annotations

import re
import subprocess
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, Process

from langbot_plugin.stack import start_runtime
from tests.e2e.processes import Runtime, stop


class StderrLines:
    """Every stderr line of a process, with :meth:`wait_for` a pattern among them."""

    def __init__(self, stream: ByteReceiveStream) -> None:
        self.stream = stream
        self.lines: list[str] = []
        self._grown = anyio.Event()
        self.ended = anyio.Event()

    async def pump(self) -> None:
        pending = b""
        try:
            async for chunk in self.stream:
                pending += chunk
                *complete, pending = pending.split(b"\n")
                self.lines.extend(line.decode("utf-8", "replace") for line in complete)
                self._grown.set()
                self._grown = anyio.Event()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        finally:
            if pending:
                self.lines.append(pending.decode("utf-8", "replace"))
            self.ended.set()
            self._grown.set()

    def matching(self, pattern: str) -> list[str]:
        return [line for line in self.lines if re.search(pattern, line)]

    async def wait_for(self, pattern: str, seconds: float = 30.0, *, after: int = 0) -> int:
        """The index of the first line at or after ``after`` matching ``pattern``."""
        with anyio.fail_after(seconds):
            while True:
                for index in range(after, len(self.lines)):
                    if re.search(pattern, self.lines[index]):
                        return index
                if self.ended.is_set():
                    raise AssertionError(f"{pattern!r} never appeared in:\n" + self.text())
                await self._grown.wait()

    def text(self) -> str:
        return "\n".join(self.lines)


@asynccontextmanager
async def read_stderr(process: Process) -> AsyncGenerator[StderrLines]:
    """``process``'s stderr (a pipe) read in the background; it is stopped in order at
    the end, before the reader."""
    assert process.stderr is not None
    lines = StderrLines(process.stderr)
    async with anyio.create_task_group() as tg:
        tg.start_soon(lines.pump)
        try:
            yield lines
        finally:
            await stop(process)
            tg.cancel_scope.cancel()


@asynccontextmanager
async def child(
    command: Sequence[str], cwd: Path, env: dict[str, Any] | None = None
) -> AsyncGenerator[tuple[Process, StderrLines]]:
    """Start ``command``; its stderr is read in the background; stopped in order at the end."""
    process = await anyio.open_process(
        list(command), cwd=cwd, env=env, stdin=None, stdout=None, stderr=subprocess.PIPE
    )
    async with read_stderr(process) as lines:
        yield process, lines


@asynccontextmanager
async def logged_runtime(
    tmp: Path, *flags: str, env: dict[str, str] | None = None
) -> AsyncGenerator[tuple[Runtime, StderrLines]]:
    """``lbp rt`` (data in ``tmp/rt-data``) with its log read line by line."""
    started = start_runtime(*flags, cwd=tmp, env=env, log=subprocess.PIPE, stdout=None)
    async with started as runtime, read_stderr(runtime.process) as lines:
        yield runtime, lines
