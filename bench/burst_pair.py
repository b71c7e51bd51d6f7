"""200 concurrent call_tool, ours and the reference's bursts alternating under one conductor.

The host section's drivers run one after the other, each its whole measurement in its
own minute; on a 2-vCPU VM the machine's speed moves by more than a third between
minutes (our burst rate read 1,670 to 2,730 calls/s in six runs within ten minutes),
so a ratio of two such figures holds that drift too. Here both stacks (host driver,
runtime, debug plugin: :mod:`bench.host_ours` and ``reference/host_driver.py`` with
``paired_bursts`` in their plan) stay up side by side, and the conductor asks each in
turn for one burst (:func:`bench.procs.serve_bursts`), the first side of each pair
taking turns. The stack that waits is idle; the CPU it spends meanwhile is reported.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from bench import stats
from bench.plan import HOST_PAIRED, HOST_PAIRED_QUICK
from bench.procs import LOG_DIR, REPO, DriverError, cpu_seconds, wait_for_idle_cpu
from bench.report import Report, Row, at_least_ref_gain

__all__ = ["measure", "paired_burst_row"]

#: Seconds a whole paired measurement may take before both drivers are killed.
DEADLINE = 900.0


class _Driver:
    """One side's driver process, spoken to line by line."""

    def __init__(self, name: str, argv: Sequence[str]) -> None:
        self.name = name
        self.log_name = f"burst-pair-{name}.log"
        with (LOG_DIR / self.log_name).open("w") as log:
            self.process = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                cwd=REPO,
            )

    def ready(self) -> list[int]:
        """The pids (host driver, runtime, plugin) once the driver has warmed up."""
        return list(self.read()["ready"])

    def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise DriverError(
                f"{self.name} driver exited {self.process.wait()} (log: {self.log_name})"
            )
        value: dict[str, Any] = json.loads(line)
        if "error" in value:
            raise DriverError(f"{self.name} driver: {value['error']} (log: {self.log_name})")
        return value

    def say(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def burst(self) -> dict[str, Any]:
        self.say("burst")
        return self.read()

    def end(self) -> None:
        """Let the driver stop; its last line must not be an error."""
        self.say("end")
        self.read()
        self.process.wait()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def measure(drivers: Mapping[str, Sequence[str]], pairs: int) -> dict[str, Any]:
    """Start the ``drivers`` (each argv ready to run), then ``pairs`` bursts a side."""
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    started: dict[str, _Driver] = {}
    watchdog = threading.Timer(DEADLINE, lambda: [d.kill() for d in started.values()])
    watchdog.start()
    try:
        for name, argv in drivers.items():
            started[name] = _Driver(name, argv)
        pids = {name: driver.ready() for name, driver in started.items()}
        wait_for_idle_cpu()
        bursts: dict[str, list[dict[str, Any]]] = {name: [] for name in started}
        names = list(started)
        for index in range(pairs):
            for name in names if index % 2 == 0 else names[::-1]:
                waiting = [pid for other in started if other != name for pid in pids[other]]
                before = sum(cpu_seconds(pid) for pid in waiting)
                result = started[name].burst()
                result["waiting_cpu"] = sum(cpu_seconds(pid) for pid in waiting) - before
                bursts[name].append(result)
        for driver in started.values():
            driver.end()
        return bursts
    finally:
        watchdog.cancel()
        for driver in started.values():
            driver.kill()


def _rates(bursts: list[dict[str, Any]]) -> list[float]:
    if any(b["errors"] for b in bursts):
        raise DriverError(f"{sum(b['errors'] for b in bursts)} calls failed")
    return [b["calls"] / b["elapsed"] for b in bursts]


def _cpu_per_call(bursts: list[dict[str, Any]]) -> str:
    """Microseconds of CPU per call of each process (host, runtime, plugin), as a/b/c."""
    calls = sum(b["calls"] for b in bursts)
    columns = zip(*(b["cpu"] for b in bursts), strict=True)
    spent = [sum(seconds) / calls * 1e6 for seconds in columns]
    return "/".join(f"{value:.0f}" for value in spent)


def paired_burst_row(report: Report, drivers: Mapping[str, Sequence[str]]) -> None:
    """One row from a paired measurement of ``drivers`` (``ours`` and ``reference``, each
    argv without the plan, which is appended)."""
    plan = HOST_PAIRED_QUICK if report.quick else HOST_PAIRED
    plan_json = json.dumps(plan.as_json())
    argvs = {name: [*argv, plan_json] for name, argv in drivers.items()}
    try:
        bursts = measure(argvs, plan.paired_bursts)
        ours, ref = _rates(bursts["ours"]), _rates(bursts["reference"])
    except (DriverError, OSError, ValueError, KeyError) as exc:
        report.problem(f"burst-pair: {exc}")
        return
    ratios = [a / b for a, b in zip(ours, ref, strict=True)]
    # CPU the other stack spent while ``name``'s bursts ran, as a share of one CPU.
    idle_other = {
        name: sum(b["waiting_cpu"] for b in runs) / sum(b["elapsed"] for b in runs)
        for name, runs in bursts.items()
    }
    row = Row(
        "host -> rt -> plugin",
        "200 concurrent call_tool, paired with the reference (alternating bursts)",
        "calls/s",
        ours=stats.median(ours),
        reference=stats.median(ref),
        higher_is_better=True,
        target=">= 10x ref (issue 22)",
        note=f"{plan.paired_bursts} bursts a side; median of the pairs' ratios "
        f"{stats.median(ratios):.1f}x; CPU per call host/rt/plugin ours "
        f"{_cpu_per_call(bursts['ours'])} us, reference {_cpu_per_call(bursts['reference'])} us; "
        f"the waiting stack used {idle_other['reference'] * 100:.0f} % of a CPU (ours) "
        f"and {idle_other['ours'] * 100:.0f} % (the reference's)",
    )
    report.add(row, at_least_ref_gain(10.0))
