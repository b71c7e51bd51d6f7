"""What the backends whose commands are child processes of the Box share (nsjail, host).

* :func:`collect`: run one command's process to its end or its timeout, keeping at most
  the request's output limit of each stream (head and tail), killing the process when
  the time is up or the caller is cancelled (a session deleted meanwhile);
  :func:`run_piped` does it for a :class:`.host_child.HostChild` it starts with our own
  non-blocking pipes as its stdout and stderr;
* :func:`spawn_piped`: start a long-lived process with our own non-blocking pipes as
  its stdio (:mod:`.pipes`), for a managed process (:class:`.jail_process.JailProcess`);
* :func:`process_command`: a managed process's argv as the shell command the backends'
  wrapper runs;
* :func:`check_reachable`: every directory above a session directory must let the
  sandbox user pass;
* :data:`WRAPPER` and :func:`command_env`: the shell line every command runs in and
  the environment it starts from.
"""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

import anyio
from anyio.abc import ByteReceiveStream, Process

from box_runtime.backends.base import ExecRequest, ProcessRequest
from box_runtime.backends.host_child import HostChild
from box_runtime.backends.jail_process import JailProcess, kill
from box_runtime.backends.pipes import PipeReceiveStream, PipeSendStream, pipe_pair
from box_runtime.errors import BoxBackendUnavailableError
from box_runtime.output import OutputCollector

__all__ = [
    "WRAPPER",
    "Collected",
    "check_reachable",
    "collect",
    "command_env",
    "process_command",
    "run_piped",
    "spawn_piped",
]

#: $1 = workdir, $2 = command; the command runs in this shell (see the Docker backend).
WRAPPER = (
    'cd "$1" 2>/dev/null || { mkdir -p "$1" && cd "$1"; } || exit 126; '
    '__lbp_c=$2; set --; eval "unset __lbp_c; $__lbp_c"'
)
#: The ``PATH`` of every command (never the Box's own).
COMMAND_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

#: Starts a process with the three child-side descriptors (stdin, stdout, stderr).
Starter = Callable[[int, int, int], Awaitable[Process]]


@dataclass(frozen=True, slots=True)
class Collected:
    """How a command ended: its exit status (``None`` when killed at its timeout)."""

    code: int | None
    timed_out: bool
    stdout: OutputCollector
    stderr: OutputCollector


async def drain(stream: ByteReceiveStream | None, collector: OutputCollector) -> None:
    if stream is None:
        return
    try:
        async for chunk in stream:
            collector.feed(chunk)
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass


async def collect(process: Process, request: ExecRequest) -> Collected:
    """Read the process's output until it ends or ``request.timeout_sec`` runs out.

    The process is killed (``process.kill()``, which for a process group means the
    group) when the time is up and when the caller is cancelled; either way this waits
    for it before returning or re-raising.
    """
    stdout = OutputCollector(request.output_limit, request.head_ratio)
    stderr = OutputCollector(request.output_limit, request.head_ratio)
    timed_out = False
    try:
        with anyio.move_on_after(request.timeout_sec) as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(drain, process.stdout, stdout)
                tg.start_soon(drain, process.stderr, stderr)
                await process.wait()
        timed_out = scope.cancelled_caught
    finally:
        if process.returncode is None:
            await kill(process)
    code = None if timed_out else process.returncode
    return Collected(code, code is None, stdout, stderr)  # no status: killed at its timeout


async def run_piped(start: Callable[[int, int, int], HostChild], request: ExecRequest) -> Collected:
    """Start a command (``start(stdin, stdout, stderr)``) with stdin ``/dev/null`` (never
    the Box's own: in stdio mode, the host's RPC pipe) and our pipes as its output, and
    :func:`collect` it."""
    out, out_child = pipe_pair(child_reads=False)
    err, err_child = pipe_pair(child_reads=False)
    try:
        child = start(subprocess.DEVNULL, out_child, err_child)
    except BaseException:
        os.close(out)
        os.close(err)
        raise
    finally:
        os.close(out_child)
        os.close(err_child)
    child.attach_output(out, err)
    try:
        return await collect(child, request)
    finally:
        await child.aclose()


async def spawn_piped(start: Starter, log_path: str | None = None) -> JailProcess:
    """Start a process through ``start`` with fresh pipes as its stdio."""
    pipes = [pipe_pair(child_reads=True), pipe_pair(child_reads=False)]
    pipes.append(pipe_pair(child_reads=False))
    try:
        process = await start(pipes[0][1], pipes[1][1], pipes[2][1])
    except BaseException:
        for ours, _ in pipes:
            os.close(ours)
        raise
    finally:
        for _, theirs in pipes:
            os.close(theirs)
    return JailProcess(
        process,
        log_path,
        stdin=PipeSendStream(pipes[0][0]),
        stdout=PipeReceiveStream(pipes[1][0]),
        stderr=PipeReceiveStream(pipes[2][0]),
    )


def command_env(*, home: str, tmp: str, env: Mapping[str, str]) -> dict[str, str]:
    """A command's whole environment: a fixed base, then what the request sets."""
    return {"PATH": COMMAND_PATH, "HOME": home, "LANG": "C.UTF-8", "TMPDIR": tmp, **env}


def process_command(request: ProcessRequest) -> ExecRequest:
    """A managed process as a command of the backends' shell wrapper (``exec argv``)."""
    return ExecRequest(
        command=f"exec {shlex.join(request.argv)}",
        workdir=request.cwd,
        env=request.env,
        timeout_sec=1,
        output_limit=0,
        head_ratio=0.0,
        artifacts=request.artifacts,
    )


def check_reachable(path: str, uid: int, who: str) -> None:
    """Every directory above ``path`` must let ``uid`` pass (``who`` names the user)."""
    parent = os.path.dirname(os.path.abspath(path))
    while True:
        info = os.stat(parent)
        if not (info.st_mode & stat.S_IXOTH or info.st_uid == uid):
            raise BoxBackendUnavailableError(
                f"{who} (uid {uid}) cannot reach {path}: {parent} is not "
                "world-traversable (chmod o+x it, or move box.state_dir / the mount)"
            )
        if parent == "/":
            return
        parent = os.path.dirname(parent)
