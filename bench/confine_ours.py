"""Confined against unconfined plugin workers: spawn time and idle memory, side by side.

    python -m bench.confine_ours ROUNDS

Starts two of our ``lbp rt``, one ``--confine off`` and one ``--confine auto``
(confined wherever this machine allows), connects to both as the host does and installs
``bench/plugins/echotool`` ROUNDS times under fresh names in each (dedicated workers,
the two interleaved), timing each ``apply_plugin_installation`` until the runtime
answers ``running`` (package transfer, unpack, worker spawn, registration); then reads
the idle RSS of the last worker's interpreter and of the jail's nsjail process (RSS and
private memory). Prints one JSON line: ``{"off": {...}, "auto": {...}}`` with
``spawn`` (seconds per round), ``worker_rss``, ``jail_rss`` and ``jail_private`` (MB)
and ``mode`` (the runtime's start-up line about confinement).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.host_ours import start_runtime
from bench.procs import print_outcome, rss_mb, tree
from bench.shared_ours import IDLE_SECONDS, TEMPLATE_ARGV, package_as, worker_template_pid
from langbot_plugin.host import LocalHost, PluginRuntimeClient
from langbot_plugin.stack import RuntimeChild

MODES = ("off", "auto")


def _smaps_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return 0.0


def workers_memory(runtime_pid: int) -> dict[str, float]:
    """RSS of the worker interpreters below the runtime (``-m langbot_plugin.worker``),
    and RSS and private (anonymous) memory of the other processes there: the jail's
    nsjail, whose file pages every jail shares."""
    out = {"worker_rss": 0.0, "jail_rss": 0.0, "jail_private": 0.0}
    template = worker_template_pid(runtime_pid)
    for pid in tree(runtime_pid)[1:]:
        if pid == template:  # the unconfined runtime's worker template (issue 22)
            continue
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if argv[1:3] in ([b"-m", b"langbot_plugin.worker"], TEMPLATE_ARGV):
                out["worker_rss"] += rss_mb(pid)
            else:
                out["jail_rss"] += rss_mb(pid)
                out["jail_private"] += _smaps_mb(pid, "Pss_Anon")
        except OSError:
            continue
    return out


async def one_install(client: PluginRuntimeClient, name: str, keep: bool) -> float:
    """Seconds from sending the package to ``running``; removed again unless ``keep``."""
    t0 = time.perf_counter()
    binding, result = await client.install_package(package_as(name))
    took = time.perf_counter() - t0
    if result.state != "running":
        raise RuntimeError(f"{name}: {result.state} {result.message}")
    if not keep:
        await client.remove_installation(binding)
    return took


async def measure(rounds: int, work: Path) -> dict[str, Any]:
    """Both runtimes up at once, their installs interleaved (the order alternating each
    round), so that the machine's load falls on both alike."""
    out: dict[str, dict[str, Any]] = {mode: {"spawn": []} for mode in MODES}
    runtimes: dict[str, RuntimeChild] = {}
    async with contextlib.AsyncExitStack() as stack:
        clients: dict[str, PluginRuntimeClient] = {}
        for mode in MODES:
            (work / mode).mkdir()
            rt = await stack.enter_async_context(
                start_runtime(work / mode, "--confine", mode, "--log-level", "INFO")
            )
            runtimes[mode] = rt
            clients[mode] = await stack.enter_async_context(rt.host(LocalHost()))
        for round_ in range(rounds):
            last = round_ == rounds - 1
            for mode in MODES if round_ % 2 else MODES[::-1]:
                took = await one_install(clients[mode], f"echoconf{round_:02d}", last)
                out[mode]["spawn"].append(took)
        await asyncio.sleep(IDLE_SECONDS)
        for mode, rt in runtimes.items():
            out[mode].update(workers_memory(rt.process.pid))
    for mode in MODES:
        lines = (work / mode / "rt.log").read_text(errors="replace").splitlines()
        out[mode]["mode"] = next((line for line in lines if "plugin workers are" in line), "")
    return out


def main(argv: list[str]) -> int:
    rounds = int(argv[0]) if argv else 5
    with tempfile.TemporaryDirectory(prefix="lbp-bench-confine-") as tmp:
        work = Path(tmp)
        return print_outcome(lambda: asyncio.run(measure(rounds, work)), logs=work)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
