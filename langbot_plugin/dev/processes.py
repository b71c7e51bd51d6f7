"""Child processes and ports of a ``lbp dev`` session (also used by ``lbp demo``).

:func:`stop_process` stops a child the project's way: close its stdin, ask it to
terminate, wait a bounded time, then kill it. :func:`free_port` picks a free port on
127.0.0.1 for a server about to start; :func:`wait_for_port` waits (bounded) until a
child's server accepts connections.
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


async def stop_process(process: Process, *, stdin_grace: float = 0.0, grace: float = 10.0) -> None:
    """Stop a child in order: close stdin, wait up to ``stdin_grace`` seconds (a daemon
    started with ``-s`` stops when its stdin closes), terminate, wait up to ``grace``
    seconds, kill; then release it. Shielded: it finishes even in a cancelled scope."""
    with anyio.CancelScope(shield=True):
        if process.returncode is None and process.stdin is not None:
            await process.stdin.aclose()
        if process.returncode is None and stdin_grace > 0:
            with anyio.move_on_after(stdin_grace):
                await process.wait()
        if process.returncode is None:
            process.terminate()
            with anyio.move_on_after(grace):
                await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()
        await process.aclose()


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
