"""The peers of a link that are child processes: how every one of ours is stopped, and
the ports of the ones that listen.

:func:`stop_process` is the one stop order (the runtime's plugin workers, the stdio
controller a host spawns a daemon with, ``lbp dev``, ``lbp demo``, the harness, the
Box's child starter): close the child's stdin, give it a while to exit by itself (a
daemon started with ``-s`` stops when its stdin closes), terminate it, wait, kill it,
wait. :func:`free_port` picks a free port on 127.0.0.1 for a server about to start;
:func:`wait_for_port` waits (bounded) until a child's server accepts connections.
"""

from __future__ import annotations

import socket

import anyio
from anyio.abc import Process

__all__ = ["free_port", "port_open", "stop_process", "wait_for_port"]


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
