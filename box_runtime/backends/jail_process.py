"""A managed process that is a child of the Box, its stdio pipes (nsjail, host).

Under nsjail the process is ``nsjail -Mo`` itself (the jailed program is PID 1 of its
own pid namespace): SIGTERM and SIGKILL go to nsjail, which takes the whole jail down
with it. Under the host backend it is the leader of its own process group, whose
signals go to the group (:class:`.host_child.HostChild`). The stdio are our own
non-blocking pipes (:mod:`.pipes`): closing stdin asks the program to end. When nsjail
could not create the jail, its log (kept next to the session) explains why;
:attr:`JailProcess.exit_note` carries it.
"""

from __future__ import annotations

import contextlib
import signal

import anyio
from anyio.abc import ByteReceiveStream, Process

from box_runtime.backends.base import SpawnedProcess
from box_runtime.backends.pipes import PipeSendStream

__all__ = ["NSJAIL_FAILED", "JailProcess", "kill"]

#: nsjail's own exit status when it fails before the jailed program runs.
NSJAIL_FAILED = 255
_KILL_WAIT_SEC = 5.0


class JailProcess(SpawnedProcess):
    def __init__(
        self,
        process: Process,
        log_path: str | None,
        *,
        stdin: PipeSendStream,
        stdout: ByteReceiveStream,
        stderr: ByteReceiveStream,
    ) -> None:
        self._process = process
        self._log_path = log_path
        self.stdin = stdin
        self.send_nowait = stdin.send_nowait
        self.stdout = stdout
        self.stderr = stderr
        self.exit_note = ""

    async def wait(self) -> int | None:
        code = await self._process.wait()
        if code == NSJAIL_FAILED and self._log_path is not None:
            with contextlib.suppress(OSError):
                log = await anyio.Path(self._log_path).read_text(errors="replace")
                self.exit_note = f"nsjail: {log.strip()[-500:]}" if log.strip() else ""
        return code

    async def signal(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            self._process.send_signal(signal.Signals(signum))

    async def aclose(self) -> None:
        process = self._process
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                await kill(process)
            for stream in (self.stdin, self.stdout, self.stderr):
                with contextlib.suppress(OSError, anyio.BrokenResourceError):
                    await stream.aclose()
            await process.aclose()


async def kill(process: Process) -> None:
    """Kill ``process`` and wait (bounded) for it, even while being cancelled."""
    with anyio.CancelScope(shield=True):
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        with anyio.move_on_after(_KILL_WAIT_SEC):
            await process.wait()
