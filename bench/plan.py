"""The RPC measurement plan, run identically against every implementation.

A plan is sent to each driver as JSON (``bench/reference/rpc_driver.py`` has its own
copy of the loop, because it runs under the reference interpreter). Drivers return
raw samples in seconds; :mod:`bench.stats` summarises them in one place.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import time
from dataclasses import asdict, dataclass, replace
from typing import Any, Protocol

__all__ = [
    "FULL",
    "HOST_FULL",
    "HOST_PAIRED",
    "HOST_PAIRED_QUICK",
    "HOST_QUICK",
    "QUICK",
    "HostPlan",
    "Peer",
    "Plan",
    "echo_payload",
    "run_plan",
]


@dataclass(frozen=True)
class Plan:
    warmup: int
    ping: int
    workers: int
    concurrent: int
    echo_bytes: int
    echo_rounds: int
    file_bytes: int
    file_rounds: int

    def as_json(self) -> dict[str, int]:
        return asdict(self)


FULL = Plan(
    warmup=300,
    ping=3000,
    workers=64,
    concurrent=6400,
    echo_bytes=8 << 20,
    echo_rounds=3,
    file_bytes=1 << 20,
    file_rounds=5,
)
QUICK = Plan(
    warmup=30,
    ping=300,
    workers=64,
    concurrent=640,
    echo_bytes=8 << 20,
    echo_rounds=1,
    file_bytes=1 << 20,
    file_rounds=2,
)


def echo_payload(size: int) -> str:
    """Incompressible ASCII of ``size`` characters (base64 of random bytes)."""
    return base64.b64encode(os.urandom(size * 3 // 4)).decode("ascii")


class Peer(Protocol):
    """One client connection to an echo server, whatever the implementation."""

    async def ping(self) -> None: ...

    # Optional: ``async def set_concurrent(self, on: bool)`` is awaited around the
    # concurrent test by peers that read answers differently when calls overlap.

    async def echo(self, blob: str) -> str: ...

    async def transfer(self, content: bytes, chunk_bytes: int) -> str:
        """Send ``content`` as a file and return the SHA-256 the server computed."""
        ...


async def run_plan(
    peer: Peer, plan: Plan, file_chunks: dict[str, int] | None = None
) -> dict[str, Any]:
    """Run ``plan`` on ``peer``; ``file_chunks`` names the transfer variants to time."""
    out: dict[str, Any] = {}
    for _ in range(plan.warmup):
        await peer.ping()
    samples: list[float] = []
    for _ in range(plan.ping):
        t0 = time.perf_counter()
        await peer.ping()
        samples.append(time.perf_counter() - t0)
    out["ping"] = samples

    remaining = [plan.concurrent]

    async def worker() -> None:
        while remaining[0] > 0:
            remaining[0] -= 1
            await peer.ping()

    set_concurrent = getattr(peer, "set_concurrent", None)
    if set_concurrent is not None:
        await set_concurrent(True)
    await asyncio.gather(*(worker() for _ in range(plan.workers)))  # warm the path
    remaining[0] = plan.concurrent
    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(plan.workers)))
    out["concurrent"] = {"elapsed": time.perf_counter() - t0, "total": plan.concurrent}
    if set_concurrent is not None:
        await set_concurrent(False)

    payload = echo_payload(plan.echo_bytes)
    samples = []
    for i in range(plan.echo_rounds + 1):
        t0 = time.perf_counter()
        reply = await peer.echo(payload)
        elapsed = time.perf_counter() - t0
        if len(reply) != len(payload):
            raise RuntimeError("echo came back truncated")
        if i:  # the first round is a warm-up
            samples.append(elapsed)
    out["echo"] = samples

    content = os.urandom(plan.file_bytes)
    digest = hashlib.sha256(content).hexdigest()
    for name, chunk_bytes in (file_chunks or {}).items():
        samples = []
        for i in range(plan.file_rounds + 1):
            t0 = time.perf_counter()
            got = await peer.transfer(content, chunk_bytes)
            elapsed = time.perf_counter() - t0
            if got != digest:
                raise RuntimeError("file arrived corrupted")
            if i:
                samples.append(elapsed)
        out[name] = samples
    return out


@dataclass(frozen=True)
class HostPlan:
    """host -> rt -> plugin: spawn rounds, idle wait, sequential and concurrent calls.

    With ``paired_bursts`` the drivers serve bursts of ``concurrent`` calls on command
    instead of their own concurrent rounds (:mod:`bench.burst_pair`, that many a side)."""

    spawn_rounds: int
    idle_seconds: float
    warmup: int
    calls: int
    concurrent: int
    concurrent_rounds: int
    paired_bursts: int = 0

    def as_json(self) -> dict[str, float]:
        return asdict(self)


HOST_FULL = HostPlan(
    spawn_rounds=5, idle_seconds=2.0, warmup=100, calls=1000, concurrent=200, concurrent_rounds=10
)
HOST_QUICK = HostPlan(
    spawn_rounds=2, idle_seconds=1.0, warmup=20, calls=200, concurrent=200, concurrent_rounds=3
)
HOST_PAIRED = HostPlan(
    spawn_rounds=1,
    idle_seconds=0.5,
    warmup=200,
    calls=100,
    concurrent=200,
    concurrent_rounds=0,
    paired_bursts=40,
)
HOST_PAIRED_QUICK = replace(HOST_PAIRED, paired_bursts=8)
