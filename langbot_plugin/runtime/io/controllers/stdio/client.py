"""Spawn a runtime (``python -m langbot_plugin.cli.__init__ rt -s``) and talk over its pipes.

The link runs on pipes this controller owns (as the runtime's own workers do): each frame
is one write, frames above 16 KiB are chunk-framed the way reference runtimes expect, and
the runtime's stdout carries only frames (it points its own stray output at stderr).
Stopping follows the order every child of ours gets: close its stdin, wait, terminate,
wait, kill.
"""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Mapping, Sequence

import anyio
import anyio.abc

from langbot_plugin.rpc.processes import spawn_linked, stop_process
from langbot_plugin.rpc.transport_stdio import pipe_transport
from langbot_plugin.runtime.io.connection import TransportConnection
from langbot_plugin.runtime.io.controller import Controller, NewConnectionCallback

__all__ = ["StdioClientController"]

logger = logging.getLogger("langbot_plugin.runtime.io.stdio")

#: Seconds given to each stop step (exit after stdin closes, after SIGTERM, after SIGKILL).
STOP_STEP_SEC = 2.0


async def _drain(stream: anyio.abc.ByteReceiveStream, name: str) -> None:
    async for chunk in stream:
        for line in chunk.decode("utf-8", "replace").splitlines():
            logger.info("%s: %s", name, line)


class StdioClientController(Controller):
    """Starts ``command args`` and hands the link over its pipes to the callback."""

    process: anyio.abc.Process | None = None
    connection: TransportConnection | None = None

    def __init__(
        self,
        command: str,
        args: Sequence[str],
        env: Mapping[str, str],
        working_dir: str = ".",
        *,
        capture_stderr: bool = False,
        close_process_on_callback_return: bool = True,
    ) -> None:
        self.command = command
        self.args = list(args)
        self.env = dict(env)
        self.working_dir = working_dir
        self.capture_stderr = capture_stderr
        self.close_process_on_callback_return = close_process_on_callback_return

    async def run(self, new_connection_callback: NewConnectionCallback) -> None:
        process, from_child, from_parent = await spawn_linked(
            [self.command, *self.args],
            self.working_dir,
            self.env,
            subprocess.PIPE if self.capture_stderr else None,
        )
        self.process = process
        async with anyio.create_task_group() as tg:
            if process.stderr is not None:
                tg.start_soon(_drain, process.stderr, os.path.basename(self.command))
            try:
                async with pipe_transport(from_child, from_parent) as transport:
                    self.connection = TransportConnection(transport)
                    await new_connection_callback(self.connection)
            finally:
                if self.close_process_on_callback_return:
                    await self.close()
                tg.cancel_scope.cancel()

    async def close(self) -> None:
        """Close the pipes, then stop the process in order."""
        connection, self.connection = self.connection, None
        if connection is not None:
            await connection.close()
        process, self.process = self.process, None
        gone = process is None or await stop_process(
            process, stdin_grace=STOP_STEP_SEC, grace=STOP_STEP_SEC, release=False
        )
        if not gone:
            raise RuntimeError("the runtime process did not exit after SIGKILL")
