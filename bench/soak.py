"""``make bench-soak``: memory, descriptors and threads of ``lbp rt`` and ``lbp box`` under
mixed work for a long time (an hour by default). Not part of the test suite.

    python -m bench.soak [--seconds 3600] [--json .bench/soak.json]

Starts our ``lbp rt`` (as ``make bench`` does) and our ``lbp box`` (Docker backend,
``lbp-test-busybox:latest``), connects to both as the host does, installs one plugin
that stays (``bench/plugins/echotool``) and one AgentRunner (``bench/plugins/sleeper``),
then repeats one cycle of mixed work until the time is up:

* 20 ``call_tool`` calls to the plugin that stays;
* an install of another copy of echotool, a call to it, a reload (the same installation
  sent again as revision 2, as an upgrade is), a call, its removal;
* a run of the AgentRunner, cancelled after its first result;
* a Box session: create, 3 execs, a managed process started, spoken to and stopped,
  delete.

After each cycle (the daemons idle between two cycles) it reads each daemon's own RSS,
open descriptors and threads from ``/proc``. The first fifth of the time (and at least
the first five cycles) is warm-up;
after it, a daemon is **flat** when its RSS stays within 5 MB (max - min) and the
fitted trend of its descriptors and threads rises by at most 2 and 1 over the whole
soak (the Box's pool of engine connections moves between about 19 and 25 sockets
cycle by cycle without climbing; a leak climbs). Prints a table and the verdict;
exits 1 when a daemon grew.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import sys
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.box_bench import CONTEXT, INSTANCE
from bench.host_ours import TOOL, session_payload, start_runtime
from bench.procs import REPO, rss_mb
from bench.shared_ours import package_as
from box_runtime.child import start_box
from box_runtime.client import BoxClient
from langbot_plugin.host import LocalHost, PluginRuntimeClient

__all__ = ["Sample", "main", "settled_sample", "trend", "verdict"]

SLEEPER = Path(__file__).resolve().parent / "plugins" / "sleeper"
IMAGE = "lbp-test-busybox:latest"
#: RSS may move this much after warm-up and still be flat.
FLAT_MB = 5.0
WARMUP_SHARE = 0.2
#: ... and at least this many cycles (the Box's engine connections fill up in about four).
WARMUP_CYCLES = 5


@dataclass
class Sample:
    at: float  # seconds since the start
    cycle: int
    rss_mb: float
    fds: int
    threads: int


def read_sample(pid: int, at: float, cycle: int) -> Sample:
    threads = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            threads = int(line.split()[1])
    return Sample(at, cycle, rss_mb(pid), len(os.listdir(f"/proc/{pid}/fd")), threads)


#: How much a count may rise over the soak (its fitted trend) and still be no growth:
#: pools (engine connections, worker threads) come and go by a few.
FDS_SLACK, THREADS_SLACK = 2.0, 1.0


async def settled_sample(pid: int, at: float, cycle: int) -> Sample:
    """The fewest descriptors and threads of three reads 0.2 s apart: a daemon may still
    be closing the last cycle's pipes and sockets when its answer has arrived."""
    reads: list[Sample] = []
    for index in range(3):
        if index:
            await asyncio.sleep(0.2)
        reads.append(read_sample(pid, at, cycle))
    return Sample(
        at,
        cycle,
        reads[-1].rss_mb,
        min(r.fds for r in reads),
        min(r.threads for r in reads),
    )


def trend(values: list[int]) -> float:
    """The least-squares rise of ``values`` from the first sample to the last."""
    count = len(values)
    if count < 2:
        return 0.0
    mean_x, mean_y = (count - 1) / 2, sum(values) / count
    spread = sum((x - mean_x) ** 2 for x in range(count))
    slope = sum((x - mean_x) * (y - mean_y) for x, y in enumerate(values)) / spread
    return slope * (count - 1)


def verdict(samples: list[Sample], warmup: float) -> dict[str, Any]:
    """Flat within :data:`FLAT_MB` after ``warmup`` seconds, no fd or thread growth."""
    after = [s for s in samples if s.at >= warmup and s.cycle > WARMUP_CYCLES] or samples[-1:]
    base, last = after[0], after[-1]
    rss = [s.rss_mb for s in after]
    spread = max(rss) - min(rss)
    fds, threads = [s.fds for s in after], [s.threads for s in after]
    return {
        "rss_after_warmup": base.rss_mb,
        "rss_end": last.rss_mb,
        "rss_spread": spread,
        "fds": (base.fds, last.fds, max(fds)),
        "threads": (base.threads, last.threads, max(threads)),
        "samples_after_warmup": len(after),
        "fds_trend": trend(fds),
        "threads_trend": trend(threads),
        "flat": spread <= FLAT_MB and trend(fds) <= FDS_SLACK and trend(threads) <= THREADS_SLACK,
    }


class Work:
    """One soak cycle's operations against both daemons; counts what it did."""

    def __init__(self, rt: PluginRuntimeClient, local: LocalHost, box: BoxClient) -> None:
        self.rt, self.local, self.box = rt, local, box
        self.session = session_payload(rt)
        self.counts: dict[str, int] = {}
        self._n = 0

    def _count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    async def call(self, scope: Any = None) -> None:
        self._n += 1
        text = f"soak {self._n}"
        reply = await self.rt.call_tool(
            TOOL,
            {"text": text},
            scope=scope,
            session=self.session,
            query_id=self._n,
            query_uuid=str(uuid.uuid4()),
        )
        if reply != {"echo": {"text": text}}:
            raise RuntimeError(f"unexpected tool response {reply!r}")
        self._count("call_tool")

    async def install_reload_remove(self) -> None:
        package = package_as("soaktemp")
        installation = str(uuid.uuid4())
        binding, result = await self.rt.install_package(package, installation_uuid=installation)
        if result.state != "running":
            raise RuntimeError(f"install: {result.state} {result.message}")
        await self.call(binding)
        binding, result = await self.rt.install_package(
            package, installation_uuid=installation, revision=2
        )
        if result.state != "running":
            raise RuntimeError(f"reload: {result.state} {result.message}")
        await self.call(binding)
        await self.rt.remove_installation(binding)
        self._count("install+reload+remove")

    async def run_and_cancel(self, scope: Any) -> None:
        started = await self.local.start_run("bench/soaksleep", "sleeper", "sleep", timeout=600)
        first = asyncio.Event()
        items = self.rt.run_runner(
            "bench", "soaksleep", "sleeper", started.context, scope=scope, timeout=600
        )
        driving = asyncio.create_task(
            self.local.runs.drive(started, items, on_result=lambda _: first.set())
        )
        await asyncio.wait_for(first.wait(), 60)
        self.local.runs.cancel(started.run_id, "soak: stop")
        outcome = await asyncio.wait_for(driving, 60)
        if outcome.status != "cancelled":
            raise RuntimeError(f"run ended {outcome.status!r}")
        self._count("run")

    async def box_session(self) -> None:
        session_id = "soak-" + secrets.token_hex(4)
        await self.box.create_session(session_id=session_id, image=IMAGE)
        for _ in range(3):
            result = await self.box.exec(
                session_id=session_id, cmd="echo hi", image=IMAGE, workdir="/tmp"
            )
            if result.stdout != "hi\n":
                raise RuntimeError(f"exec: {result!r}")
        spec = {"process_id": "soak", "command": "cat", "cwd": "/tmp"}
        await self.box.start_managed_process(session_id, spec)
        await self.box.stop_managed_process(session_id, "soak")
        await self.box.delete_session(session_id)
        self._count("box session")

    async def cycle(self, staying: Any, sleeper: Any) -> None:
        for _ in range(20):
            await self.call(staying)
        await self.install_reload_remove()
        await self.run_and_cancel(sleeper)
        await self.box_session()


async def soak(seconds: float, work: Path) -> dict[str, Any]:
    warmup = seconds * WARMUP_SHARE
    box_config = {
        "backend": "docker",
        "deployment_id": "soak" + secrets.token_hex(3),
        "state_dir": str(work / "box"),
        "local": {"image": IMAGE},
        "docker": {"pull_missing_images": False},
    }
    samples: dict[str, list[Sample]] = {"lbp rt": [], "lbp box": []}
    errors: list[str] = []
    local = LocalHost()
    async with (
        start_runtime(work) as rt,
        rt.host(local) as client,
        start_box(config=box_config, log=work / "box.log") as box,
        BoxClient.connect(box.url, instance_id=INSTANCE, context=CONTEXT) as box_client,
    ):
        staying, result = await client.install_package(package_as("echotool"))
        sleeper, slept = await client.install_package(package_as("soaksleep", SLEEPER))
        for state in (result, slept):
            if state.state != "running":
                raise RuntimeError(f"install: {state.state} {state.message}")
        pids = {"lbp rt": rt.process.pid, "lbp box": box.process.pid}
        job = Work(client, local, box_client)
        t0 = time.monotonic()
        cycle = 0
        while time.monotonic() - t0 < seconds:
            try:
                await job.cycle(staying, sleeper)
            except Exception as exc:  # noted; the soak goes on (growth is the question)
                errors.append(f"cycle {cycle}: {exc!r}")
                if len(errors) > 20:
                    raise RuntimeError(f"too many failed cycles: {errors[:3]}") from exc
            cycle += 1
            at = time.monotonic() - t0
            for name, pid in pids.items():
                samples[name].append(await settled_sample(pid, at, cycle))
        counts = job.counts
    return {
        "seconds": seconds,
        "warmup": warmup,
        "cycles": cycle,
        "counts": counts,
        "errors": errors,
        "daemons": {name: verdict(found, warmup) for name, found in samples.items()},
        "samples": {name: [asdict(s) for s in found] for name, found in samples.items()},
    }


def table(result: dict[str, Any]) -> str:
    lines = [
        f"soak: {result['seconds']:.0f} s, warm-up {result['warmup']:.0f} s, "
        f"{result['cycles']} cycles: "
        + ", ".join(f"{n} {what}" for what, n in result["counts"].items()),
        "",
        "| daemon | RSS after warm-up | RSS at end | RSS spread after warm-up "
        "| fds (after warm-up, end, max; trend) | threads (after warm-up, end, max; trend) "
        "| flat? |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, found in result["daemons"].items():
        cells = [
            name,
            f"{found['rss_after_warmup']:.1f} MB",
            f"{found['rss_end']:.1f} MB",
            f"{found['rss_spread']:.1f} MB",
            ", ".join(str(n) for n in found["fds"]) + f"; {found['fds_trend']:+.1f}",
            ", ".join(str(n) for n in found["threads"]) + f"; {found['threads_trend']:+.1f}",
            "yes" if found["flat"] else "NO",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.extend(f"failed: {error}" for error in result["errors"])
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__)
    parser.add_argument("--seconds", type=float, default=3600.0)
    parser.add_argument("--json", type=Path, default=REPO / ".bench" / "soak.json")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="lbp-bench-soak-") as tmp:
        result = asyncio.run(soak(args.seconds, Path(tmp)))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))
    flat = all(found["flat"] for found in result["daemons"].values())
    print(
        f"\n{'flat' if flat else 'NOT flat'}: RSS within {FLAT_MB:.0f} MB after warm-up, "
        "no descriptor or thread growth" + ("" if flat else " (see above)")
    )
    return 0 if flat else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
