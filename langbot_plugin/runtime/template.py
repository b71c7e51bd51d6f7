"""Plugin workers forked from a template process instead of started afresh.

:class:`WorkerTemplate` keeps one process (:mod:`langbot_plugin.worker.template`) with
the worker's imports done, on the runtime's interpreter with the workers' allowlisted
environment, and asks it to fork each worker: registered in milliseconds, its imported
pages shared. Only for unconfined workers on the runtime's own interpreter (a jail needs
a fresh ``execve``; docs/performance.md). A forked worker is the template's child:
:class:`ForkedProcess` watches and signals it through a pidfd and asks the template for
its exit status.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from langbot_plugin.rpc.fd_messages import receive_size, send_message, unpack
from langbot_plugin.rpc.transport_stdio import read_pipe

__all__ = ["UNKNOWN_STATUS", "ForkedProcess", "TemplateError", "WorkerTemplate", "usable"]

logger = logging.getLogger("langbot_plugin.runtime.template")

#: the exit status of a forked worker whose template ended before it could say
UNKNOWN_STATUS = 255


class TemplateError(OSError):
    """The template could not fork a worker (it ended, or refused)."""


class WorkerTemplate:
    """One template process, started on first use, restarted if it ends."""

    def __init__(self, python: str, env: dict[str, str]) -> None:
        self.python = python
        self.env = env
        self._process: Process | None = None
        self._control: socket.socket | None = None
        self._lock = anyio.Lock()

    async def _start(self) -> socket.socket:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._process = await anyio.open_process(
                [self.python, "-m", "langbot_plugin.worker.template"],
                cwd="/",
                env=self.env,
                stdin=theirs.fileno(),
                stdout=subprocess.DEVNULL,
                stderr=None,  # the template itself never writes but when it fails
            )
        except OSError:
            ours.close()
            raise
        finally:
            theirs.close()
        ours.setblocking(False)
        self._control = ours
        logger.debug("worker template started (pid %d)", self._process.pid)
        return ours

    @property
    def pid(self) -> int | None:
        """The template's process id while it runs."""
        process = self._process
        return process.pid if process is not None and process.returncode is None else None

    async def start(self) -> None:
        """Start the template now (it imports while the runtime goes on), if not up."""
        async with self._lock:
            if self._control is None:
                try:
                    await self._start()
                except OSError as exc:  # each spawn then tries again, or starts afresh
                    logger.warning("the worker template did not start: %s", exc)

    async def _ask(
        self, request: dict[str, Any], fds: Sequence[int] = (), *, start: bool = True
    ) -> tuple[dict[str, Any], list[int]]:
        """Send one request and read its answer; ``start``: start the template first if
        it is not running (else that is a :class:`TemplateError`)."""
        async with self._lock:
            control = self._control
            if control is None or not alive(self._process):
                self._forget()
                if not start:
                    raise TemplateError("the worker template is not running")
                control = await self._start()
            try:
                send_message(control, request, fds)
                answer, received = await _receive(control)
            except (OSError, ValueError) as exc:
                self._forget()
                raise TemplateError(f"the worker template ended: {exc}") from exc
            if answer is None:
                self._forget()
                raise TemplateError("the worker template ended")
            if "error" in answer:
                for fd in received:
                    os.close(fd)
                raise TemplateError(str(answer["error"]))
            return answer, received

    def _forget(self) -> None:
        if self._control is not None:
            self._control.close()
        self._control = None

    async def spawn(
        self, args: list[str], cwd: Path, env: dict[str, str]
    ) -> tuple[ForkedProcess, int, int]:
        """A worker forked with ``args`` (after ``-m langbot_plugin.worker``), in ``cwd``,
        with ``env`` as its whole environment; as ``rpc.processes.spawn_linked``, it and
        the runtime's two pipe ends. Raises :class:`TemplateError` (an OSError)."""
        to_child, from_parent = os.pipe()
        from_child, to_parent = os.pipe()
        err_read, err_write = os.pipe()
        try:
            answer, fds = await self._ask(
                {"op": "fork", "argv": args, "cwd": str(cwd), "env": env},
                [to_child, to_parent, err_write],
            )
        except BaseException:
            for fd in (from_parent, from_child, err_read):
                os.close(fd)
            raise
        finally:
            for fd in (to_child, to_parent, err_write):  # the child has its own copies
                os.close(fd)
        if len(fds) != 1:  # never: the template sends the child's pidfd with its pid
            for fd in (*fds, from_parent, from_child, err_read):
                os.close(fd)
            raise TemplateError(f"the template answered a fork with {len(fds)} descriptors")
        process = ForkedProcess(self, int(answer["pid"]), fds[0], await read_pipe(err_read))
        return process, from_child, from_parent

    async def status(self, pid: int) -> int:
        """The exit status of an ended child (the template reaps it)."""
        try:
            # the template that forked it, or none: a new one would not know the child
            answer, _ = await self._ask({"op": "wait", "pid": pid}, start=False)
        except TemplateError as exc:
            logger.info("exit status of worker %d unknown: %s", pid, exc)
            return UNKNOWN_STATUS
        return int(answer["status"])

    async def aclose(self) -> None:
        """End the template (it exits when its socket closes); its children live on."""
        async with self._lock:
            self._forget()
            process, self._process = self._process, None
        if process is not None:
            from langbot_plugin.rpc.processes import stop_process

            await stop_process(process, stdin_grace=5.0, grace=5.0)


class ForkedProcess(Process):
    """A worker forked by a :class:`WorkerTemplate`, watched through its pidfd."""

    def __init__(
        self, template: WorkerTemplate, pid: int, pidfd: int, stderr: ByteReceiveStream
    ) -> None:
        self._template = template
        self._pid = pid
        self._pidfd: int | None = pidfd
        self._stderr = stderr
        self._returncode: int | None = None
        self._lock = anyio.Lock()

    async def wait(self) -> int:
        async with self._lock:
            if self._returncode is None and self._pidfd is not None:
                await anyio.wait_readable(self._pidfd)
                self._returncode = await self._template.status(self._pid)
                os.close(self._pidfd)
                self._pidfd = None
        return self._returncode if self._returncode is not None else UNKNOWN_STATUS

    def send_signal(self, signal: int) -> None:
        if self._pidfd is None:
            raise ProcessLookupError(self._pid)
        try:
            _pidfd_send_signal(self._pidfd, signal)
        except ProcessLookupError:
            pass  # ended already; wait() says how

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    async def aclose(self) -> None:
        await self._stderr.aclose()
        if self._returncode is None:
            with anyio.CancelScope(shield=True):
                await self.wait()

    @property
    def pid(self) -> int:
        return self._pid

    @property
    def returncode(self) -> int | None:
        return self._returncode

    @property
    def stdin(self) -> ByteSendStream | None:
        return None

    @property
    def stdout(self) -> ByteReceiveStream | None:
        return None

    @property
    def stderr(self) -> ByteReceiveStream | None:
        return self._stderr


async def _receive(control: socket.socket) -> tuple[dict[str, Any] | None, list[int]]:
    while True:
        await anyio.wait_readable(control)
        try:
            data, ancillary, _flags, _addr = control.recvmsg(*receive_size())
        except BlockingIOError:
            continue
        return unpack(data, ancillary)


def alive(process: Process | None) -> bool:
    """``process`` has started and not exited yet."""
    return process is not None and process.returncode is None


def _pidfd_send_signal(pidfd: int, sig: int) -> None:
    send = getattr(signal, "pidfd_send_signal", None)
    if send is None:  # pragma: no cover - Linux with Python >= 3.9 always has it
        raise OSError("pidfd_send_signal is not available")
    send(pidfd, sig)


def usable(python: str) -> bool:
    """Whether workers on ``python`` can be forked from a template here (Linux
    pidfds, the runtime's own interpreter)."""
    return (
        sys.platform == "linux"
        and hasattr(os, "pidfd_open")
        and os.path.abspath(python) == os.path.abspath(sys.executable)
    )
