"""The peers of a link that are child processes: how every one of ours is stopped, and
the ports of the ones that listen.

:func:`stop_process` is the one stop order: close the child's stdin, give it a while to
exit by itself (a daemon started with ``-s`` stops when its stdin closes), terminate,
wait, kill, wait. :func:`open_child` starts a child logging to a file and stops it so
when the block ends; :func:`spawn_linked` starts one linked on pipes we own.
:func:`free_port` picks a free port on 127.0.0.1;
:func:`wait_for_port` waits (bounded) until a child's server accepts connections.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import IO, Literal

import anyio
from anyio.abc import Process

__all__ = [
    "Log",
    "free_port",
    "log_tail",
    "open_child",
    "port_open",
    "spawn_linked",
    "stop_process",
    "wait_for_port",
]

#: Where a child's output goes: a file path (appended to), an open file, ``None`` (this
#: process's own streams), ``subprocess.DEVNULL`` or ``subprocess.PIPE``.
Log = Path | IO[bytes] | int | None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def stop_process(
    process: Process, *, stdin_grace: float = 0.0, grace: float = 10.0, release: bool = True
) -> bool:
    """Stop a child in order: close its stdin (when this side holds it), wait up to
    ``stdin_grace`` seconds for it to exit, terminate it, wait up to ``grace`` seconds,
    kill it, wait up to ``grace`` seconds. ``True`` once it has exited. Then, with
    ``release``, close its pipes (``False`` when a task of the caller still reads one).
    Shielded: it finishes even in a cancelled scope."""
    steps = ((None, stdin_grace), (process.terminate, grace), (process.kill, grace))
    with anyio.CancelScope(shield=True):
        if process.returncode is None and process.stdin is not None:
            await process.stdin.aclose()
        for signal_it, seconds in steps:
            if process.returncode is not None:
                break
            if signal_it is not None:
                try:
                    signal_it()
                except ProcessLookupError:  # exited meanwhile: wait() collects it
                    pass
            with anyio.move_on_after(seconds):
                await process.wait()
        if release and process.returncode is not None:
            await process.aclose()
    return process.returncode is not None


async def spawn_linked(
    command: Sequence[str],
    cwd: str | Path,
    env: Mapping[str, str],
    stderr: int | None = subprocess.PIPE,
) -> tuple[Process, int, int]:
    """Start ``command`` linked on pipes we own, with ``env`` as its whole environment;
    returns it and our two pipe ends (read from the child, write to it). Raises
    :class:`OSError` if it cannot start, with nothing left open."""
    # Not anyio's process streams: each frame is one synchronous write on our own
    # pipe, so the writer needs no lock on this hot path.
    to_child, from_parent = os.pipe()
    from_child, to_parent = os.pipe()
    try:
        process = await anyio.open_process(
            command, cwd=cwd, env=env, stdin=to_child, stdout=to_parent, stderr=stderr
        )
    except BaseException:
        os.close(from_parent)
        os.close(from_child)
        raise
    finally:
        os.close(to_child)  # the child, if it started, has its own copies
        os.close(to_parent)
    return process, from_child, from_parent


async def port_open(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:``port``."""
    try:
        stream = await anyio.connect_tcp("127.0.0.1", port)
    except OSError:
        return False
    await stream.aclose()
    return True


async def wait_for_port(port: int, seconds: float, process: Process | None = None) -> bool:
    """Wait (bounded) until 127.0.0.1:``port`` accepts connections; ``False`` when the
    time is up or ``process`` (the server) ended first."""
    with anyio.move_on_after(seconds):
        while process is None or process.returncode is None:
            if await port_open(port):
                return True
            await anyio.sleep(0.05)  # nothing to wait on but the port itself
    return False


def log_tail(log: Log, lines: int = 3, sep: str = " / ") -> str:
    """The last ``lines`` lines of a child's log file (to explain a start that failed)."""
    if not isinstance(log, Path):
        return "see its log"
    try:
        kept = log.read_text(errors="replace").strip().splitlines()[-lines:]
    except OSError:
        return "no output"
    return sep.join(kept) or "no output"


@asynccontextmanager
async def open_child(
    argv: Sequence[str],
    *,
    log: Log = subprocess.DEVNULL,
    stdout: int | IO[bytes] | Literal["log"] | None = "log",
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    stdin_grace: float = 0.0,
    grace: float = 10.0,
) -> AsyncGenerator[Process]:
    """Start ``argv`` with its stderr (and its stdout, unless ``stdout`` says where
    else) to ``log``; when the block ends, stop it with :func:`stop_process` (``stdin_grace``,
    ``grace``). ``env`` is its whole environment (``None``: this process's)."""
    async with AsyncExitStack() as stack:
        sink = stack.enter_context(log.open("ab")) if isinstance(log, Path) else log
        process = await anyio.open_process(
            list(argv),
            env=None if env is None else dict(env),
            cwd=cwd,
            stdout=sink if stdout == "log" else stdout,
            stderr=sink,
        )
        try:
            yield process
        finally:
            await stop_process(process, stdin_grace=stdin_grace, grace=grace)


@asynccontextmanager
async def daemon_child(
    argv: Sequence[str],
    port: int,
    *,
    name: str,
    stdio: bool,
    error: type[Exception],
    log: Log,
    stdout: int | IO[bytes] | Literal["log"] | None = "log",
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    grace: float,
    start_seconds: float,
) -> AsyncGenerator[Process]:
    """A daemon as a child (:func:`open_child`): serving on 127.0.0.1:``port`` (the start
    waits until it accepts connections, else ``error``: ``name`` did not start, and the
    tail of its log) or, with
    ``stdio``, on its own stdin and stdout (it gets ``grace`` to stop by itself once its
    stdin closes). Each later stop step gets ``grace`` too."""
    async with open_child(
        argv,
        log=log,
        stdout=subprocess.PIPE if stdio else stdout,
        env=env,
        cwd=cwd,
        stdin_grace=grace if stdio else 0.0,
        grace=grace,
    ) as process:
        if not stdio and not await wait_for_port(port, start_seconds, process):
            raise error(f"{name} did not start ({log_tail(log)})")
        yield process
