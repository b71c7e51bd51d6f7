"""The plugin under development in its own process: ``lbp run`` as a child of ``lbp dev``.

:class:`PluginProcess` starts ``lbp run`` for the plugin folder against the session's
runtime (:func:`langbot_plugin.stack.start_plugin`: the debug key handed over in the
environment, never on the command line),
turns its output into ``log`` events (records grouped as the CLI's log format writes
them), reports a save that does not load as ``plugin.broken`` and the process ending
as ``plugin.exited``, and stops it the project's way when the session ends.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from subprocess import PIPE
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, Process, TaskGroup
from anyio.streams.buffered import BufferedByteReceiveStream

from langbot_plugin.dev.errors import DevError
from langbot_plugin.dev.events import EventHub, LogRecordParser
from langbot_plugin.rpc.processes import stop_process
from langbot_plugin.stack import start_plugin

__all__ = ["PluginProcess"]

#: How many lines of output are kept to explain a start that failed.
KEPT_LINES = 200
#: A record of several lines is complete once the child is quiet this long.
QUIET_SECONDS = 0.2


class PluginProcess:
    """``lbp run`` for ``root`` (see the module docstring)."""

    def __init__(
        self, root: Path, lbp_command: Sequence[str], events: EventHub, *, hot_reload: bool
    ) -> None:
        self.root = root
        self.lbp_command = list(lbp_command)
        self.events = events
        self.hot_reload = hot_reload
        self.process: Process | None = None
        self.output: list[str] = []
        self.exited = anyio.Event()
        #: Set once the plugin registered: from then on its end is news (``plugin.exited``);
        #: before, the session reports it as a failed start.
        self.started = False
        self._closing = False

    @asynccontextmanager
    async def running(self, tg: TaskGroup, debug_url: str, key: str) -> AsyncGenerator[None]:
        """Start it; stop it when the block ends. ``tg`` watches for its end."""
        args = ["-d", str(self.root), "--runtime-url", debug_url]
        if not self.hot_reload:
            args.append("--no-reload")
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "LBP_LOG_LEVEL": "info"}
        started = start_plugin(
            self.root, debug_url, key, *args, command=self.lbp_command, env=env, log=PIPE
        )
        async with started as process, anyio.create_task_group() as readers:
            self.process = process
            assert process.stdout is not None
            assert process.stderr is not None
            readers.start_soon(self._read_output, process.stdout)
            readers.start_soon(self._read_output, process.stderr)
            tg.start_soon(self._reap, process)
            try:
                yield
            finally:
                self._closing = True
                await stop_process(process)  # here, so that the readers see its end

    def start_failure(self, waited: float) -> DevError:
        """Why the plugin did not register: ``lbp run``'s own error lines when it ended
        (a plugin that does not load), else the last lines it wrote."""
        lines = [line for line in self.output if line.strip()]
        if self.exited.is_set():
            problems = [line.removeprefix("lbp run: ") for line in lines if "lbp run:" in line]
            if problems:
                return DevError(problems[0], problems[1:])
            return DevError("the plugin process ended before it registered", lines[-10:])
        return DevError(
            f"the plugin did not register within {waited:.0f} s", lines[-10:], usage=False
        )

    async def _reap(self, process: Process) -> None:
        code = await process.wait()
        self.exited.set()
        if self.started and not self._closing:
            await self.events.emit("plugin.exited", {"code": code})

    async def _read_output(self, stream: ByteReceiveStream) -> None:
        buffered = BufferedByteReceiveStream(stream)
        parser = LogRecordParser()
        while True:
            line = b""
            wait = QUIET_SECONDS if parser.pending is not None else float("inf")
            with anyio.move_on_after(wait) as quiet:
                try:
                    line = await buffered.receive_until(b"\n", 1 << 20)
                except anyio.DelimiterNotFound:  # a line over 1 MiB: take it in pieces
                    line = await buffered.receive(1 << 20)
                except (anyio.EndOfStream, anyio.IncompleteRead, anyio.ClosedResourceError):
                    for record in parser.flush():
                        await self._log(record)
                    return
            if quiet.cancelled_caught:  # quiet for a moment: the record being collected is done
                for record in parser.flush():
                    await self._log(record)
                continue
            text = line.decode("utf-8", "replace").rstrip("\r")
            self.output.append(text)
            del self.output[:-KEPT_LINES]
            for record in parser.feed(text):
                await self._log(record)

    async def _log(self, record: dict[str, Any]) -> None:
        await self.events.emit("log", {"source": "plugin", **record})
        if record["level"] == "ERROR" and "cannot be loaded" in record["text"]:
            await self.events.emit("plugin.broken", {"text": record["text"]})
