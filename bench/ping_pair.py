"""WS ping, ours against the raw ``websockets`` library, paired in one client process.

    python -m bench.ping_pair PLAN_JSON

The separate drivers of the ``rpc`` section (:mod:`bench.echo_raw`,
:mod:`bench.echo_ours`) run one after the other, so a ratio between them also holds
whatever the machine did in between: on a 2-vCPU VM the raw library's own p50 moves by
a third from run to run, more than issue 22's 1.1x line. Here one client process holds
both connections (each to its own server process, the same servers as those drivers)
and alternates blocks of pings between them, the first side of each block pair taking
turns; both sides therefore see the same load. Prints one JSON line: every sample of
each side (seconds) and each block pair's ratio of medians (ours / raw).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from contextlib import AsyncExitStack
from typing import Any, Protocol

from websockets.asyncio.client import connect

from bench import stats
from bench.echo_ours import OurPeer
from bench.echo_raw import MAX_BYTES, RawPeer, ws_server
from bench.procs import REPO, print_outcome, run_json, wait_for_idle_cpu
from bench.report import Report, Row, within_raw
from langbot_plugin.rpc import RPCSession
from langbot_plugin.rpc.transport_ws import connect_ws

__all__ = ["measure", "paired_ping_row"]

PLAN = {"warmup": 300, "blocks": 30, "block": 100}
QUICK_PLAN = {"warmup": 30, "blocks": 6, "block": 50}


class Pinger(Protocol):
    async def ping(self) -> None: ...


async def timed_block(peer: Pinger, count: int) -> list[float]:
    samples: list[float] = []
    for _ in range(count):
        started = time.perf_counter()
        await peer.ping()
        samples.append(time.perf_counter() - started)
    return samples


async def measure(plan: dict[str, int]) -> dict[str, Any]:
    async with AsyncExitStack() as stack:
        raw_port = await stack.enter_async_context(ws_server("bench.echo_raw"))
        ours_port = await stack.enter_async_context(ws_server("bench.echo_ours"))
        ws = await stack.enter_async_context(
            connect(f"ws://127.0.0.1:{raw_port}/", max_size=MAX_BYTES, compression=None)
        )
        transport = await stack.enter_async_context(connect_ws(f"ws://127.0.0.1:{ours_port}/"))
        session = await stack.enter_async_context(
            RPCSession(transport, None, name="bench-pair").running()
        )
        peers: dict[str, Pinger] = {"raw": RawPeer(ws.send, ws.recv), "ours": OurPeer(session)}
        for peer in peers.values():
            await timed_block(peer, plan["warmup"])
        samples: dict[str, list[float]] = {name: [] for name in peers}
        ratios: list[float] = []
        for block in range(plan["blocks"]):
            order = ("raw", "ours") if block % 2 == 0 else ("ours", "raw")
            medians: dict[str, float] = {}
            for name in order:
                taken = await timed_block(peers[name], plan["block"])
                samples[name].extend(taken)
                medians[name] = stats.median(taken)
            ratios.append(medians["ours"] / medians["raw"])
        return {**samples, "ratios": ratios}


def paired_ping_row(report: Report, repeat: int) -> None:
    """Run the driver ``repeat`` times; one row from all runs' samples pooled."""
    plan = QUICK_PLAN if report.quick else PLAN
    pooled: dict[str, list[float]] = {"raw": [], "ours": [], "ratios": []}
    for _ in range(repeat):
        wait_for_idle_cpu()
        try:
            result = run_json(
                [sys.executable, "-m", "bench.ping_pair", json.dumps(plan)],
                name="ping-pair",
                cwd=REPO,
            )
        except Exception as exc:
            report.problem(f"ping-pair: {exc}")
            continue
        for key, values in pooled.items():
            values.extend(result[key])
    if not pooled["ratios"]:
        return
    row = Row(
        "RPC over WebSocket",
        "ping round trip, p50, paired with raw in one client",
        "ms",
        ours=stats.median(pooled["ours"]) * 1000,
        raw=stats.median(pooled["raw"]) * 1000,
        target="<= 1.1x raw (issue 22)",
        note=f"{repeat} run(s) of {plan['blocks']} alternating blocks a side; "
        f"median of the blocks' ratios {stats.median(pooled['ratios']):.2f}x",
    )
    report.add(row, within_raw(1.1))


def main(argv: list[str]) -> int:
    return print_outcome(lambda: asyncio.run(measure(json.loads(argv[0]))))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
