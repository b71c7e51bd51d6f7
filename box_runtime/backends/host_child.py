"""One command of the host backend: a child process in its own session and process group.

:func:`start_child` forks the command with :class:`subprocess.Popen`: a new session
(``setsid``, so the child leads its own process group), the user switched (``setgroups``,
``setgid``, ``setuid``, done by Popen itself), umask 077, a scrubbed environment, and,
in the child after the switch and before ``exec``, the resource limits
(:class:`Rlimits`, applied with :func:`resource.setrlimit`; hard and soft, so the
command cannot raise them again).

:class:`HostChild` is that child as an anyio :class:`~anyio.abc.Process`: ``kill``,
``terminate`` and ``send_signal`` go to the whole process group, and once the leader
has exited, :meth:`HostChild.wait` kills what is left of its group before it reaps the
leader, so no background process keeps the command's output pipes (or anything else)
alive. The exit is awaited on a pidfd where the kernel has them (Linux 5.3+), else in
a worker thread. With ``group=False`` (an nsjail command: nsjail takes its jail down
itself) the signals go to the child alone: the nsjail backend runs its commands with
it, through the same :func:`.local_exec.run_piped` as this backend.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from box_runtime.backends.pipes import PipeReceiveStream

__all__ = ["HostChild", "Rlimits", "start_child"]


@dataclass(frozen=True, slots=True)
class Rlimits:
    """The limits of one command; ``None`` leaves a limit as the Box has it."""

    cpu_sec: int | None
    address_space_bytes: int | None
    nproc: int | None
    file_bytes: int
    nofile: int

    def pairs(self) -> list[tuple[int, int]]:
        import resource  # POSIX only, as is this backend (host_policy refuses elsewhere)

        limits = [
            (resource.RLIMIT_FSIZE, self.file_bytes),
            (resource.RLIMIT_NOFILE, self.nofile),
            (resource.RLIMIT_CORE, 0),
        ]
        if self.cpu_sec is not None:
            limits.append((resource.RLIMIT_CPU, self.cpu_sec))
        if self.address_space_bytes is not None:
            limits.append((resource.RLIMIT_AS, self.address_space_bytes))
        if self.nproc is not None:
            limits.append((resource.RLIMIT_NPROC, self.nproc))
        return limits


def _preexec(pairs: list[tuple[int, int]], resource: ModuleType) -> None:
    """Runs in the child, after the user switch: only C-level calls, no allocation-heavy work
    (``resource`` is imported by the parent: nothing is imported between fork and exec)."""
    for kind, value in pairs:
        _soft, hard = resource.getrlimit(kind)
        capped = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(kind, (capped, capped))


def start_child(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    uid: int | None,
    gid: int | None,
    limits: Rlimits,
    stdin: int,
    stdout: int,
    stderr: int,
) -> HostChild:
    """Fork ``argv`` as described in the module docstring; ``uid=None``: no switch."""
    import resource

    pairs = limits.pairs()
    switch: dict[str, object] = {}
    if uid is not None:
        switch = {"user": uid, "group": gid, "extra_groups": []}
    popen = subprocess.Popen(
        list(argv),
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,
        umask=0o077,
        close_fds=True,
        # Safe with threads here: the child calls only getrlimit/setrlimit (no lock
        # another thread could hold) between fork and exec.
        preexec_fn=lambda: _preexec(pairs, resource),  # noqa: PLW1509
        **switch,  # type: ignore[arg-type]
    )
    return HostChild(popen)


class HostChild(Process):
    """A started child; its signals go to its process group unless ``group=False`` (see
    the module docstring)."""

    def __init__(self, popen: subprocess.Popen[bytes], *, group: bool = True) -> None:
        self._popen = popen
        self._group = group
        self._pidfd: int | None = None
        with contextlib.suppress(AttributeError, OSError):
            self._pidfd = os.pidfd_open(popen.pid)
        self._stdout: ByteReceiveStream | None = None
        self._stderr: ByteReceiveStream | None = None
        #: Set while one task waits for the exit; the others wait for it to finish.
        self._waiter: anyio.Event | None = None

    def attach_output(self, stdout: int, stderr: int) -> None:
        """Read the command's output from our ends of its pipes (non-blocking fds)."""
        self._stdout = PipeReceiveStream(stdout)
        self._stderr = PipeReceiveStream(stderr)

    async def wait(self) -> int:
        popen = self._popen
        while popen.returncode is None:
            if self._waiter is not None:
                await self._waiter.wait()  # another task waits; it may be cancelled
                continue
            self._waiter = anyio.Event()
            try:
                if self._pidfd is not None:
                    await anyio.wait_readable(self._pidfd)  # exited, not yet reaped
                else:
                    await anyio.to_thread.run_sync(_wait_exited, popen.pid, abandon_on_cancel=True)
                if self._group:
                    self.kill()  # what the leader left behind
                popen.wait()
                self._close_pidfd()
            finally:
                waiter, self._waiter = self._waiter, None
                waiter.set()
        return popen.returncode

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def send_signal(self, signal: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if self._group:
                os.killpg(self._popen.pid, signal)
            elif self._popen.returncode is None:  # never a reaped (reusable) pid
                os.kill(self._popen.pid, signal)

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    @property
    def stdin(self) -> ByteSendStream | None:
        return None

    @property
    def stdout(self) -> ByteReceiveStream | None:
        return self._stdout

    @property
    def stderr(self) -> ByteReceiveStream | None:
        return self._stderr

    def _close_pidfd(self) -> None:
        fd, self._pidfd = self._pidfd, None
        if fd is not None:
            anyio.notify_closing(fd)
            os.close(fd)

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            if self._popen.returncode is None:
                self.kill()
                await self.wait()
            for stream in (self._stdout, self._stderr):
                if stream is not None:
                    await stream.aclose()
            self._close_pidfd()


def _wait_exited(pid: int) -> None:
    """Block until ``pid`` exited, leaving it to be reaped (``waitid`` with ``WNOWAIT``)."""
    with contextlib.suppress(ChildProcessError):
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
