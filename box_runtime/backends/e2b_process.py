"""A managed process in an E2B sandbox: a background command with its stdin kept open.

The SDK starts it (``commands.run(background=True, stdin=True)``) and delivers its
output to callbacks; the callbacks here put each chunk into a bounded channel
(:func:`~.streams.chunk_channel`), so a slow client slows the SDK's reading of the
stream and nothing is dropped. Each stdin message is one ``send_stdin`` call; closing
stdin is ``close_stdin``; SIGKILL is the SDK's ``kill``, any other signal a ``kill``
command run in the sandbox.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from anyio.abc import ByteSendStream
from e2b import AsyncCommandHandle, AsyncSandbox, CommandExitException

from box_runtime.backends.base import SpawnedProcess
from box_runtime.backends.e2b_errors import sdk_errors
from box_runtime.backends.streams import ChunkSendStream, chunk_channel

__all__ = ["E2BProcess", "E2BStdin", "output_sink"]


def output_sink(stream: ChunkSendStream) -> Callable[[str], Awaitable[None]]:
    """An SDK output callback that forwards into ``stream`` (waits while it is full)."""

    async def sink(text: str) -> None:
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            await stream.send(text.encode())

    return sink


class E2BStdin(ByteSendStream):
    """The process's stdin: each write one ``send_stdin``, closing it ``close_stdin``."""

    def __init__(self, sandbox: AsyncSandbox, pid: int) -> None:
        self._sandbox = sandbox
        self._pid = pid
        self._closed = False

    async def send(self, item: bytes) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        try:
            with sdk_errors("send stdin", self._sandbox.sandbox_id):
                await self._sandbox.commands.send_stdin(self._pid, bytes(item))
        except Exception as exc:  # the process ended or its sandbox went away
            raise anyio.BrokenResourceError from exc

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception), anyio.move_on_after(10):
            await self._sandbox.commands.close_stdin(self._pid)


class E2BProcess(SpawnedProcess):
    def __init__(
        self,
        sandbox: AsyncSandbox,
        handle: AsyncCommandHandle[Any],
        outputs: tuple[ChunkSendStream, ChunkSendStream],
        receivers: tuple[Any, Any],
        user: str,
    ) -> None:
        self._sandbox = sandbox
        self._handle = handle
        self._outputs = outputs
        self._user = user
        self.stdin = E2BStdin(sandbox, handle.pid)
        self.stdout, self.stderr = receivers

    @staticmethod
    def channels() -> tuple[tuple[ChunkSendStream, ChunkSendStream], tuple[Any, Any]]:
        out_send, out_receive = chunk_channel()
        err_send, err_receive = chunk_channel()
        return (out_send, err_send), (out_receive, err_receive)

    async def wait(self) -> int | None:
        try:
            result = await self._handle.wait()
            return result.exit_code
        except CommandExitException as exc:
            if exc.error:
                self.exit_note = f"e2b: {exc.error}"
            return exc.exit_code
        except Exception as exc:  # the stream broke: the sandbox was killed, say
            self.exit_note = f"e2b: the process's stream ended: {exc}"
            return None
        finally:
            for stream in self._outputs:
                await stream.aclose()

    async def signal(self, signum: int) -> None:
        pid = self._handle.pid
        with contextlib.suppress(Exception), anyio.move_on_after(10):
            if signum == signal.SIGKILL:
                await self._sandbox.commands.kill(pid)
            else:
                await self._sandbox.commands.run(
                    f"kill -s {signal.Signals(signum).name[3:]} -- {pid}",
                    user=self._user,
                    timeout=10,
                )

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(Exception), anyio.move_on_after(5):
                await self._handle.disconnect()
            for stream in (*self._outputs, self.stdout, self.stderr):
                await stream.aclose()
