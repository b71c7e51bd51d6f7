"""Process helpers: free ports, waiting for a listener, drivers that print JSON, RSS.

Standard library only: the reference drivers (``bench/reference``), which run under the
reference interpreter and must never see our package, import this module as ``procs``.
That is why its ``free_port`` and asyncio ``stop_process`` do not come from
``langbot_plugin.rpc.processes`` (the one port and stop helper everywhere else, our
bench drivers included; only the reference drivers and the raw-websockets floor,
``echo_raw``, which must not load our package, use these; ``echo_raw``'s server starter
also serves ``ping_pair``, which runs that floor beside ours). :func:`wait_for_idle_cpu`
lets a driver start on a calm machine. :func:`serve_bursts` is the driver's side of
:mod:`bench.burst_pair`, which alternates bursts of ours and the reference's.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import traceback
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio

__all__ = [
    "REPO",
    "DriverError",
    "busy_cpus",
    "cpu_seconds",
    "free_port",
    "one_line_error",
    "print_outcome",
    "rss_mb",
    "run_json",
    "run_table",
    "serve_bursts",
    "stop_process",
    "tree_rss_mb",
    "wait_for_idle_cpu",
    "wait_port",
]

REPO = Path(__file__).resolve().parent.parent


class DriverError(RuntimeError):
    """A benchmark driver failed; the message carries the tail of its stderr."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def wait_port(port: int, timeout: float = 30.0) -> None:
    """Wait until something accepts TCP connections on 127.0.0.1:``port``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.01)
            continue
        writer.close()
        return


LOG_DIR = REPO / ".bench" / "logs"


def run_json(
    argv: Sequence[str],
    *,
    name: str,
    timeout: float = 900.0,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> Any:
    """Run a driver and parse the JSON object on the last line of its stdout.

    The driver's stderr is kept in ``.bench/logs/NAME.log``. A driver that fails prints
    ``{"error": "..."}`` as its last line; that text becomes the :class:`DriverError`.
    """
    proc = subprocess.run(
        list(argv), capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env, check=False
    )
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    log = LOG_DIR / f"{name}.log"
    log.write_text(proc.stderr)
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    result: Any = None
    if lines:
        try:
            result = json.loads(lines[-1])
        except ValueError:
            result = None
    if isinstance(result, dict) and "error" in result:
        raise DriverError(f"{result['error']} (log: {log.relative_to(REPO)})")
    if proc.returncode != 0 or result is None:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        raise DriverError(f"exited {proc.returncode}: {tail} (log: {log.relative_to(REPO)})")
    return result


def one_line_error(exc: BaseException) -> str:
    """The innermost single cause of ``exc`` as ``Class: text`` (task groups unwrapped,
    and a ``RuntimeError`` raised ``from`` a cause replaced by that cause)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if exc.__cause__ is not None and isinstance(exc, RuntimeError):
        exc = exc.__cause__
    return f"{type(exc).__name__}: {exc}".splitlines()[0]


def print_outcome(measure: Callable[[], Any], logs: Path | None = None) -> int:
    """Run a driver's ``measure`` and print its result as the one JSON line
    :func:`run_json` reads; return the driver's exit status.

    On failure the traceback (and the tail of ``rt.log`` / ``plugin.log`` in ``logs``)
    goes to stderr and ``{"error": "..."}`` to stdout.
    """
    try:
        result = measure()
    except Exception as exc:
        traceback.print_exc()
        paths = [] if logs is None else [logs / "rt.log", logs / "plugin.log"]
        for path in paths:
            if path.exists():
                tail = path.read_text(errors="replace")[-3000:]
                sys.stderr.write(f"--- {path.name}\n{tail}\n")
        sys.stdout.write(json.dumps({"error": one_line_error(exc)}) + "\n")
        return 1
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


def rss_mb(pid: int) -> float:
    """Resident set size of ``pid`` in MiB (Linux ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise DriverError(f"no VmRSS for pid {pid}")


async def stop_process(proc: asyncio.subprocess.Process, grace: float = 3.0) -> None:
    """Terminate a child we started, then kill it if it lingers."""
    if proc.returncode is not None:
        return
    proc.terminate()
    try:
        await asyncio.wait_for(proc.wait(), grace)
    except TimeoutError:
        proc.kill()
        await proc.wait()


def _say(value: Any) -> None:
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


async def serve_bursts(burst: Callable[[], Awaitable[dict[str, Any]]], pids: Sequence[int]) -> int:
    """A driver's side of :mod:`bench.burst_pair`: one burst per ``burst`` line on stdin.

    Prints ``{"ready": pids}`` first, then after each burst its result with ``"cpu"``,
    the CPU seconds each of ``pids`` spent on it; returns the number of bursts served
    when the conductor sends anything else or closes stdin."""
    loop = asyncio.get_running_loop()
    _say({"ready": list(pids)})
    served = 0
    while (await loop.run_in_executor(None, sys.stdin.readline)).strip() == "burst":
        before = [cpu_seconds(pid) for pid in pids]
        result = await burst()
        _say({**result, "cpu": [cpu_seconds(pid) - b for pid, b in zip(pids, before, strict=True)]})
        served += 1
    return served


def cpu_seconds(pid: int) -> float:
    """User + system CPU time ``pid`` has used so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree(pid: int) -> list[int]:
    """``pid`` and all its descendants (Linux ``/proc``)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def tree_rss_mb(pid: int) -> float:
    """RSS of ``pid`` plus all its descendants, in MiB."""
    total = 0.0
    for current in tree(pid):
        try:
            total += rss_mb(current)
        except (OSError, DriverError):
            continue
    return total


_Figures = TypeVar("_Figures")


def run_table(
    argv: list[str], measure: Callable[[], Awaitable[_Figures]], table: Callable[[_Figures], str]
) -> int:
    """A bench child's ``main``: measure, print the table, and write the raw figures as
    JSON to ``argv[0]`` when the parent names a file."""
    figures = anyio.run(measure)
    print(table(figures))
    if argv:
        Path(argv[0]).write_text(json.dumps(figures, indent=2))
    return 0


def busy_cpus(interval: float = 1.0) -> float:
    """How many CPUs were busy during the last ``interval`` seconds (from ``/proc/stat``)."""

    def sample() -> tuple[int, int]:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        idle = fields[3] + fields[4]
        return sum(fields[:8]), idle

    total0, idle0 = sample()
    time.sleep(interval)
    total1, idle1 = sample()
    cpus = os.cpu_count() or 1
    spent = max(1, total1 - total0)
    return cpus * (1 - (idle1 - idle0) / spent)


def wait_for_idle_cpu(limit: float = 0.5, patience: float = 60.0) -> float:
    """Before a driver starts (none of ours running), wait for other work to calm down.

    Returns the busy CPUs measured last. Gives up after ``patience`` seconds.
    """
    deadline = time.monotonic() + patience
    while True:
        try:
            busy = busy_cpus()
        except (OSError, ValueError):
            return 0.0
        if busy < limit or time.monotonic() > deadline:
            return busy
