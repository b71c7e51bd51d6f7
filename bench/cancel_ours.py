"""How fast a run the host cancels stops its runner, on our side only: the reference has
no real cancellation (a flag its runners poll), so there is nothing like for like.

    python -m bench.cancel_ours ROUNDS

Starts our ``lbp rt`` and ``lbp run`` for ``bench/plugins/sleeper`` (an AgentRunner that
says one word and then parks), and per round: starts a run through the host machinery
(:class:`LocalHost`), waits for the first result, cancels the run as a user's "stop"
does, and records the seconds from the cancel until (a) the host's driver has ended the
run, (b) the runner's ``finally`` ran in the plugin process (it writes the time to a
file; both processes read the same wall clock). Prints one JSON line of raw samples.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.host_ours import (
    debug_plugin,
    debug_plugin_dir,
    start_runtime,
    wait_listed,
)
from bench.procs import print_outcome
from langbot_plugin.host import LocalHost, PluginRuntimeClient

PLUGIN_SRC = Path(__file__).resolve().parent / "plugins" / "sleeper"
IDENTITY = ("bench", "sleeper")
RUNNER = "sleeper"


def _written(marker: Path) -> str:
    try:
        return marker.read_text()
    except FileNotFoundError:
        return ""


async def closed_at(marker: Path, timeout: float = 10.0) -> float:
    """The time the runner wrote into ``marker`` when its generator was closed."""
    deadline = time.monotonic() + timeout
    while not (text := _written(marker)):
        if time.monotonic() > deadline:
            raise TimeoutError(f"the runner never closed ({marker.name} missing)")
        await asyncio.sleep(0.001)
    return float(text)


async def one_round(
    local: LocalHost, client: PluginRuntimeClient, plugin_dir: Path
) -> tuple[float, float]:
    started = await local.start_run("/".join(IDENTITY), RUNNER, "sleep", timeout=600)
    first = asyncio.Event()
    items = client.run_runner(*IDENTITY, RUNNER, started.context, timeout=600)
    driving = asyncio.create_task(local.runs.drive(started, items, on_result=lambda _: first.set()))
    await asyncio.wait_for(first.wait(), 30)
    t0 = time.time()
    local.runs.cancel(started.run_id, "bench: user pressed stop")
    outcome = await asyncio.wait_for(driving, 30)
    ended = time.time() - t0
    if outcome.status != "cancelled":
        raise RuntimeError(f"run ended {outcome.status!r}, not cancelled")
    closed = await closed_at(plugin_dir / f"closed-{started.run_id}") - t0
    return ended, closed


async def measure(rounds: int, work: Path) -> dict[str, Any]:
    local = LocalHost()
    log_path = work / "plugin.log"
    with log_path.open("wb") as log:
        async with start_runtime(work) as rt, rt.host(local) as client:
            plugin_dir, key = await debug_plugin_dir(client, PLUGIN_SRC, work, rt.debug_port)
            async with debug_plugin(rt, plugin_dir, key, log) as plugin:
                await wait_listed(client, True, plugin, log_path, identity=IDENTITY)
                await one_round(local, client, plugin_dir)  # warm-up
                ended: list[float] = []
                closed: list[float] = []
                for _ in range(rounds):
                    host_side, runner_side = await one_round(local, client, plugin_dir)
                    ended.append(host_side)
                    closed.append(runner_side)
                return {"ended": ended, "closed": closed}


def main(argv: list[str]) -> int:
    rounds = int(argv[0]) if argv else 20
    work = Path(tempfile.mkdtemp(prefix="lbp-bench-cancel-"))
    try:
        return print_outcome(lambda: asyncio.run(measure(rounds, work)), logs=work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
