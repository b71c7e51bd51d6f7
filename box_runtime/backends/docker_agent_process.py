"""A managed process started by the in-container agent: no ``docker exec`` at all.

When the runtime reaches the container's ``/tmp`` (:mod:`.docker_agent`), the agent's
second loop (:data:`~box_runtime.backends.docker_agent.PROCESS_LOOP`) starts the
process: we create named pipes for its stdin, stdout, stderr and exit status, write its
script (the environment, then
:data:`~box_runtime.backends.docker_process.PROCESS_WRAPPER`), and write the token into
the loop's control pipe; the loop forks ``setsid sh <script>`` detached and never waits
for it. Signals go through the pid file
(:func:`~box_runtime.backends.docker_process.signal_blocking`). The agent adds no
authority.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shlex
from collections.abc import Awaitable, Callable

import anyio

from box_runtime.backends.base import ProcessRequest, SpawnedProcess
from box_runtime.backends.docker_agent import AgentRun, offer_token, open_agent_dir, status_code
from box_runtime.backends.docker_io import make_pipe
from box_runtime.backends.docker_process import PROCESS_WRAPPER
from box_runtime.backends.pipes import PipeReceiveStream, PipeSendStream

__all__ = ["AgentProcess", "spawn_via_agent"]

#: The control pipe of the agent's process loop (in :data:`AGENT_DIR`).
PROCESS_CONTROL = "pctl"
#: How long the loop may take to open its control pipe (a container just started).
_CONNECT_WAIT_SEC = 1.0
#: How often a process whose status has not come is checked for a container still there.
_ALIVE_POLL_SEC = 5.0

Signal = Callable[[int], Awaitable[None]]


def process_script(request: ProcessRequest, pid_file: str) -> str:
    """The script the loop runs: exports, then the wrapper with its arguments (quoted)."""
    lines = [f"export {name}={shlex.quote(value)}" for name, value in request.env.items()]
    arguments = (pid_file, request.cwd, *request.argv)
    lines.append("set -- " + " ".join(shlex.quote(argument) for argument in arguments))
    lines.append(PROCESS_WRAPPER)
    return "\n".join(lines) + "\n"


#: Nobody reads the process loop's pipe yet: between two reads, or not made yet.
_LOOP_NOT_READ = frozenset({errno.ENXIO, errno.ENOENT})


async def _hand_over(directory: int, token: str) -> bool:
    """Write the token into the process loop's control pipe; False when nobody listens."""
    with anyio.move_on_after(_CONNECT_WAIT_SEC):
        while True:
            offered = offer_token(directory, PROCESS_CONTROL, token, waiting=_LOOP_NOT_READ)
            if offered is not None:
                return offered
            await anyio.sleep(0.001)  # the loop is between two reads, or starting
    return False


class AgentProcess(SpawnedProcess):
    """A managed process the agent started; its stdio are named pipes in the container."""

    def __init__(self, run: AgentRun, pipes: tuple[int, int, int, int], *, root: str) -> None:
        self._files = run
        stdin_writer, self._stdin_reader, stdout, stderr = pipes
        self._status_fd = run.open_pipe("r")
        self._root = root
        stdin = PipeSendStream(stdin_writer)
        self.stdin = stdin
        self.send_nowait = stdin.send_nowait
        self.stdout = PipeReceiveStream(stdout)
        self.stderr = PipeReceiveStream(stderr)
        self.signal_via: Signal | None = None

    def _container_alive(self) -> bool:
        return os.path.isdir(os.path.join(self._root, "tmp"))

    async def wait(self) -> int | None:
        """The status the loop wrote; ``None`` when the container went away first."""
        fd = self._status_fd
        status = bytearray()
        while b"\n" not in status:
            try:
                chunk = os.read(fd, 64)
            except BlockingIOError:
                with anyio.move_on_after(_ALIVE_POLL_SEC):
                    await anyio.wait_readable(fd)
                if not self._container_alive():
                    self._files.close_writers()
                    return None
                continue
            if not chunk:  # cannot happen while we hold a writer; treat as unknown
                break
            status += chunk
        self._files.close_writers()  # stdout and stderr may end now
        return status_code(bytes(status)) if status else None

    async def signal(self, signum: int) -> None:
        if self.signal_via is not None:
            await self.signal_via(signum)

    async def aclose(self) -> None:
        await self.stdin.aclose()
        await self.stdout.aclose()
        await self.stderr.aclose()
        with contextlib.suppress(OSError):
            os.close(self._stdin_reader)
        with contextlib.suppress(OSError):
            os.close(self._status_fd)
        self._files.readers.clear()  # closed above, by their streams
        self._files.close()  # the writers we held, and the files
        with contextlib.suppress(OSError):
            os.close(self._files.directory)


async def spawn_via_agent(
    root: str, token: str, request: ProcessRequest, pid_file: str
) -> AgentProcess | None:
    """Start ``request`` through the agent of the container at ``root``; ``None`` when it
    has no process loop (a container of an older runtime, an image without the tools)."""
    directory = open_agent_dir(root, PROCESS_CONTROL)
    if directory is None:
        return None
    run = AgentRun(directory, token)
    opened: list[int] = []
    try:
        stdin_reader, stdin_writer = make_pipe(directory, f"{token}.i")
        run.names.append(f"{token}.i")
        opened += [stdin_reader, stdin_writer]
        stdout, stderr = run.open_pipe("o"), run.open_pipe("e")
        process = AgentProcess(run, (stdin_writer, stdin_reader, stdout, stderr), root=root)
        run.write_script(process_script(request, pid_file))
        if await _hand_over(directory, token):
            return process
    except OSError:
        pass
    for fd in opened:
        with contextlib.suppress(OSError):
            os.close(fd)
    run.close()
    os.close(directory)
    return None
