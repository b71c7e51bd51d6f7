"""A tiny in-container agent that runs commands without a ``docker exec`` each time.

Every session container starts :data:`AGENT_SCRIPT`, a POSIX-shell loop waiting on a
named pipe in the container's ``/tmp``. When the runtime reaches that directory (through
``/proc/<init pid>/root``), an exec writes the command as a script next to the pipe,
creates named pipes for its stdout, stderr and exit status, and writes the command's
token into the control pipe; the agent runs ``setsid sh <script>`` and writes the
status. Without the agent :func:`run_via_agent` returns ``None`` and the backend falls
back to ``docker exec`` (docs/box.md, *Docker*). The agent adds no authority.
"""

from __future__ import annotations

import contextlib
import errno
import os
import selectors
import shlex
import stat
import time
from collections.abc import Mapping

from box_runtime.backends.docker_io import Abort, Pipes, open_dir
from box_runtime.output import OutputCollector

__all__ = [
    "AGENT_DIR",
    "AGENT_SCRIPT",
    "PROCESS_LOOP",
    "AgentRun",
    "agent_script_text",
    "offer_token",
    "open_agent_dir",
    "run_via_agent",
    "status_code",
]

AGENT_DIR = "/tmp/.lbp-agent"
#: The agent's second loop: managed processes (:mod:`.docker_agent_process`). It holds
#: its control pipe open for reading and writing, so tokens written at once all wait in
#: it (none is lost between two reads) and it never sees an end; it forks each process
#: detached (``docker-init`` reaps it) under a parent that records its exit status, and
#: goes back to reading at once.
PROCESS_LOOP = (
    'exec 3<>"$a/pctl" || exit 0; '
    "while IFS= read -r t <&3; do "
    "case \"$t\" in ''|*[!0-9a-f]*) continue ;; esac; "
    '[ -f "$a/$t.sh" ] || continue; '
    '( ( setsid sh "$a/$t.sh" <"$a/$t.i" >"$a/$t.o" 2>"$a/$t.e"; '
    'echo "$?" 1<>"$a/$t.r" ) & ) 3<&-; '
    "done"
)
#: The agent loop. It gives up (leaving ``docker exec`` to do the work) when it cannot
#: start or when its control pipe disappears; it never spins.
AGENT_LOOP = (
    f"a={AGENT_DIR}; "
    'mkdir -p "$a" && chmod 700 "$a" && command -v setsid >/dev/null '
    '&& mkfifo "$a/pctl" && mkfifo "$a/ctl" || exit 0; '
    f"({PROCESS_LOOP}) & "
    'while [ -p "$a/ctl" ]; do '
    'IFS= read -r t <"$a/ctl" || continue; '
    "case \"$t\" in ''|*[!0-9a-f]*) continue ;; esac; "
    '[ -f "$a/$t.sh" ] || continue; '
    'setsid sh "$a/$t.sh" >"$a/$t.o" 2>"$a/$t.e" </dev/null & p=$!; '
    'echo "$p $t" >/tmp/.lbp-exec; '
    'wait "$p"; s=$?; '
    'echo "$s" 1<>"$a/$t.r"; '
    "done"
)
#: The container's main process: the agent in the background, ``sleep`` in front, so
#: the container lives on whatever happens to the agent.
AGENT_SCRIPT = f"({AGENT_LOOP}) </dev/null >/dev/null 2>&1 & exec sleep infinity"
_READ_BYTES = 256 * 1024
_CONNECT_WAIT_SEC = 1.0
#: How long output is still collected after the command exited (a background process it
#: started may hold stdout open; it keeps running, the exec returns).
_LINGER_SEC = 0.5


def agent_script_text(workdir: str, env: Mapping[str, str], command: str) -> str:
    """The script the agent runs for one exec (values are shell-quoted)."""
    quoted = shlex.quote(workdir)
    lines = [f"cd {quoted} 2>/dev/null || {{ mkdir -p {quoted} && cd {quoted}; }} || exit 126"]
    lines += [f"export {name}={shlex.quote(value)}" for name, value in env.items()]
    lines.append(command)
    return "\n".join(lines) + "\n"


class AgentRun(Pipes):
    """The host-side files and pipes of one agent exec, all inside the agent directory."""

    def __init__(self, directory: int, token: str) -> None:
        Pipes.__init__(self, directory)
        self.token = token

    def open_pipe(self, suffix: str) -> int:
        return self.open(f"{self.token}.{suffix}")  # writer held until the status arrives

    def write_script(self, text: str) -> None:
        name = f"{self.token}.sh"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        fd = os.open(name, flags, 0o644, dir_fd=self.directory)
        self.names.append(name)
        try:
            os.fchmod(fd, 0o644)
            os.write(fd, text.encode("utf-8"))
        finally:
            os.close(fd)


def open_agent_dir(root: str, control: str) -> int | None:
    """The agent directory's fd if its control pipe ``control`` is there, else ``None``."""
    try:
        directory = open_dir(root, "tmp", AGENT_DIR.rsplit("/", 1)[1])
    except OSError:
        return None
    with contextlib.suppress(OSError):
        if stat.S_ISFIFO(os.stat(control, dir_fd=directory, follow_symlinks=False).st_mode):
            return directory
    os.close(directory)
    return None


def _agent_dir(root: str, seconds: float) -> int | None:
    """The agent directory's fd once its control pipe exists, or ``None``.

    A new container starts the agent within milliseconds, hence the short wait.
    """
    deadline = time.monotonic() + seconds
    while True:
        directory = open_agent_dir(root, "ctl")
        if directory is not None or time.monotonic() > deadline:
            return directory
        time.sleep(0.001)


def _signal_agent(directory: int, token: str, seconds: float) -> bool:
    """Hand the token to a waiting agent; False when no agent listens (within a moment)."""
    deadline = time.monotonic() + seconds
    while True:
        offered = offer_token(directory, "ctl", token)
        if offered is not None:
            return offered
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)


def offer_token(
    directory: int, name: str, token: str, *, waiting: frozenset[int] = frozenset({errno.ENXIO})
) -> bool | None:
    """Write ``token`` as one line into the FIFO ``name`` under ``directory``: ``True``
    when written, ``False`` when it cannot be (not a FIFO, another error), ``None`` while
    nobody reads it yet (an errno in ``waiting``; ENXIO: between two reads, or starting
    up), for the caller to try again."""
    try:
        fd = os.open(name, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW, dir_fd=directory)
    except OSError as exc:
        return None if exc.errno in waiting else False
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        os.write(fd, f"{token}\n".encode())
    finally:
        os.close(fd)
    return True


def status_code(line: bytes) -> int:
    """The exit status the agent wrote (the pipe is the sandbox's: trust nothing)."""
    text = line.split(b"\n", 1)[0].strip()
    return int(text) if text.isdigit() and len(text) <= 3 else -1


def run_via_agent(
    root: str,
    token: str,
    script: str,
    *,
    stdout: OutputCollector,
    stderr: OutputCollector,
    deadline: float,
    abort: Abort,
    connect_wait: float = _CONNECT_WAIT_SEC,
) -> tuple[bool, int | None] | None:
    """Run ``script`` through the agent: ``(timed_out, exit_code)``, or ``None`` if absent."""
    directory = _agent_dir(root, connect_wait)
    if directory is None:
        return None
    run = AgentRun(directory, token)
    wake_read, wake_write = os.pipe()
    abort.attach_fd(wake_write)
    selector = selectors.DefaultSelector()
    try:
        try:
            out_fd, err_fd, status_fd = run.open_pipe("o"), run.open_pipe("e"), run.open_pipe("r")
            run.write_script(script)
        except OSError:
            return None
        if not _signal_agent(directory, token, connect_wait):
            return None
        targets = {out_fd: stdout, err_fd: stderr}
        for fd in (out_fd, err_fd, status_fd, wake_read):
            selector.register(fd, selectors.EVENT_READ)
        buffer = bytearray(_READ_BYTES)
        status = bytearray()
        exit_code: int | None = None
        open_streams = 2
        while open_streams or exit_code is None:
            left = deadline - time.monotonic()
            if left <= 0:
                # Past the status, only a background process still holds the streams.
                return (False, exit_code) if exit_code is not None else (True, None)
            for key, _ in selector.select(left):
                fd = key.fd
                if fd == wake_read:
                    return True, None  # aborted: the caller kills the command
                try:
                    count = os.readv(fd, [buffer])
                except (BlockingIOError, InterruptedError):
                    continue
                if fd == status_fd:
                    status += buffer[:count]
                    if b"\n" in status:
                        exit_code = status_code(bytes(status))
                        selector.unregister(fd)
                        run.close_writers()  # the streams may end now
                        deadline = min(deadline, time.monotonic() + _LINGER_SEC)
                    continue
                if count == 0:
                    selector.unregister(fd)
                    open_streams -= 1
                    continue
                targets[fd].feed(memoryview(buffer)[:count])
        return False, exit_code
    finally:
        selector.close()
        abort.detach_fd()
        os.close(wake_read)
        os.close(wake_write)
        run.close()
        os.close(directory)
