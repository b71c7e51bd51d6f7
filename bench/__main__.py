"""``python -m bench`` (``make bench``): our implementation against the reference, side by side.

Sections, each run in child processes one after the other, never in parallel:

* ``rpc``: ping, 64-way pings, 8 MiB echo and 1 MiB file transfer over WebSocket and
  stdio: raw engine (:mod:`bench.echo_raw`), ours (:mod:`bench.echo_ours`), reference
  (``bench/reference/rpc_driver.py`` under the reference interpreter).
* ``host``: host -> ``lbp rt`` -> plugin ``call_tool`` (sequential and 200 concurrent),
  plugin spawn -> registered, idle RSS (:mod:`bench.host_ours`,
  ``bench/reference/host_driver.py``); what metrics and traces cost on ``call_tool``
  (:mod:`bench.observe_ours`).
* ``cli``: ``lbp --help`` and ``lbp ver`` wall time.
* ``curves``: call_tool against plugins loaded (:mod:`bench.curves`).
* ``box``: every ``bench/box_*.py`` module: one with ``async def run(report)`` adds rows
  to the table; one with ``main(argv) -> int`` runs as a child and its output follows.

Positional names pick sections or box modules (``python -m bench box_bench``). Options:
``--quick`` (fewer samples), ``--only SECTION`` (repeatable), ``--json PATH``
(default ``.bench/results.json``), ``--markdown PATH`` (the table as Markdown).
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import datetime
import importlib
import inspect
import json
import math
import os
import platform
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import stats
from bench.burst_pair import paired_burst_row
from bench.cli_times import time_command
from bench.curves import curves_section
from bench.ping_pair import paired_ping_row
from bench.plan import FULL, HOST_FULL, HOST_QUICK, QUICK
from bench.procs import LOG_DIR, REPO, run_json, wait_for_idle_cpu
from bench.refenv import (
    ReferenceUnavailable,
    reference_env,
    reference_python,
    reference_version,
)
from bench.report import (
    Report,
    Row,
    absolute_max,
    at_least_ref_gain,
    at_most_ref_ratio,
    below_ref,
    within_raw,
    within_raw_plus,
)

SECTIONS = ("rpc", "host", "cli", "curves", "box")
REFERENCE_DIR = Path(__file__).resolve().parent / "reference"
PLUGIN_DIR = Path(__file__).resolve().parent / "plugins" / "echotool"


def log(text: str) -> None:
    sys.stderr.write(f"bench: {text}\n")
    sys.stderr.flush()


def byte_compile() -> None:
    """Compile our tree as ``pip install`` would (``PYTHONDONTWRITEBYTECODE`` may be set)."""
    for package in ("langbot_plugin", "box_runtime", "bench"):
        compileall.compile_dir(REPO / package, quiet=1)


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def wait_for_quiet(limit: float = 1.0, patience: float = 120.0) -> None:
    """Give other work on the machine up to ``patience`` seconds to settle."""
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        try:
            if float(Path("/proc/loadavg").read_text().split()[0]) < limit:
                return
        except (OSError, ValueError):
            return
        time.sleep(5)
    log(f"machine still busy (load {load_average()}); measuring anyway")


def python_speed() -> str:
    """Seconds for a fixed pure-Python loop (best of 5): how fast this CPU is right now."""
    best = math.inf
    for _ in range(5):
        t0 = time.process_time()
        total = 0
        for i in range(1_000_000):
            total += i
        best = min(best, time.process_time() - t0)
    return f"{best * 1000:.0f} ms for 10^6 additions in a Python loop (best of 5)"


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f"{kib / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    from importlib.metadata import version

    import pydantic

    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "memory": memory,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "websockets, pydantic": f"{version('websockets')} {pydantic.VERSION}",
        "commit": commit,
        "load average at start": load_average(),
        "python speed": python_speed(),
    }


# ----------------------------------------------------------------------------- rpc


class Runs:
    """Results of repeated driver runs.

    A figure is computed per run (e.g. that run's median latency), then the runs are
    combined: ``best`` keeps the best run (lowest time, highest rate), as ``timeit``
    does, because on a shared machine the best run is the least disturbed one;
    ``median`` keeps the median run.
    """

    aggregate = "best"

    def __init__(self) -> None:
        self.results: dict[str, list[dict[str, Any]]] = {}
        #: Every per-run value behind the last figures, for the JSON output.
        self.seen: dict[str, list[float]] = {}

    def add(self, key: str, result: dict[str, Any]) -> None:
        self.results.setdefault(key, []).append(result)

    def figure(
        self,
        key: str,
        fn: Callable[[dict[str, Any]], float],
        higher_is_better: bool = False,
    ) -> float | None:
        values = [fn(result) for result in self.results.get(key, [])]
        self.seen[key] = values
        if not values:
            return None
        if self.aggregate == "median":
            return stats.median(values)
        return max(values) if higher_is_better else min(values)


def run_driver(report: Report, runs: Runs, key: str, argv: list[str], reference: bool) -> None:
    busy = wait_for_idle_cpu()
    log(f"{key} (other work before start: {busy:.1f} CPUs busy)")
    try:
        result = run_json(argv, name=key, cwd=REPO, env=reference_env() if reference else None)
    except Exception as exc:
        report.problem(f"{key}: {exc}")
        return
    runs.add(key, result)


def rpc_section(report: Report, ref: Path | None, repeat: int) -> None:
    plan = (QUICK if report.quick else FULL).as_json()
    plan_json = json.dumps(plan)
    runners: dict[str, Callable[[str], list[str]]] = {
        "raw": lambda kind: [sys.executable, "-m", "bench.echo_raw", "client", kind, plan_json],
        "ours": lambda kind: [sys.executable, "-m", "bench.echo_ours", "client", kind, plan_json],
    }
    if ref is not None:
        runners["reference"] = lambda kind: [
            str(ref),
            str(REFERENCE_DIR / "rpc_driver.py"),
            "client",
            kind,
            plan_json,
        ]
    runs = Runs()
    for round_ in range(repeat):
        for kind in ("ws", "stdio"):
            for impl, argv in runners.items():
                key = f"rpc-{impl}-{kind}"
                if repeat > 1:
                    log(f"round {round_ + 1}/{repeat}")
                run_driver(report, runs, key, argv(kind), impl == "reference")

    rpc_rows(report, runs, "ws", plan)
    paired_ping_row(report, repeat)
    rpc_rows(report, runs, "stdio", plan)


def rpc_rows(report: Report, runs: Runs, kind: str, plan: dict[str, int]) -> None:
    section = f"RPC over {'WebSocket' if kind == 'ws' else 'stdio'}"

    def fig(impl: str, sample: str, fn: Callable[[Any], float], higher: bool) -> float | None:
        def per_run(result: dict[str, Any]) -> float:
            return fn(result[sample])

        return runs.figure(f"rpc-{impl}-{kind}", per_run, higher)

    def ms(samples: list[float]) -> float:
        return stats.median(samples) * 1000

    def ms95(samples: list[float]) -> float:
        return stats.p95(samples) * 1000

    def rps(c: dict[str, float]) -> float:
        return stats.rate(c["total"], c["elapsed"])

    def row(what: str, unit: str, sample: str, fn: Callable[[Any], float], **kw: Any) -> Row:
        ref_sample = kw.pop("ref_sample", sample)
        with_raw = kw.pop("with_raw", True)
        higher = bool(kw.get("higher_is_better", False))
        row = Row(
            section,
            what,
            unit,
            ours=fig("ours", sample, fn, higher),
            reference=fig("reference", ref_sample, fn, higher),
            raw=fig("raw", sample, fn, higher) if with_raw else None,
            **kw,
        )
        figures = {"ours": row.ours, "reference": row.reference, "raw": row.raw}
        row.runs = {
            impl: runs.seen.get(f"rpc-{impl}-{kind}", [])
            for impl, value in figures.items()
            if value is not None
        }
        return row

    report.add(
        row(
            "ping round trip, p50",
            "ms",
            "ping",
            ms,
            target="<= 2x raw" if kind == "ws" else "<= 2x raw (by analogy)",
        ),
        within_raw(2.0),
    )
    report.add(row("ping round trip, p95", "ms", "ping", ms95))
    report.add(
        row(
            f"{plan['workers']}-way concurrent pings",
            "req/s",
            "concurrent",
            rps,
            higher_is_better=True,
            target=">= 4x ref",
        ),
        at_least_ref_gain(4.0),
    )
    report.add(
        row("8 MiB echo, median", "s", "echo", stats.median, target=">= 10x faster"),
        at_least_ref_gain(10.0),
    )
    report.add(
        row(
            "1 MiB file transfer, 16 KiB chunks (any peer)",
            "s",
            "file_16k",
            stats.median,
            with_raw=False,
            target=">= 10x faster",
        ),
        at_least_ref_gain(10.0),
    )
    report.add(
        row(
            "1 MiB file transfer, 1 MiB chunks (our peers)",
            "s",
            "file_1m",
            stats.median,
            ref_sample="file_16k",
            with_raw=False,
            target=">= 10x faster",
            note="reference column: its only mode, 16 KiB chunks",
        ),
        at_least_ref_gain(10.0),
    )


# ----------------------------------------------------------------------------- host


def host_section(report: Report, ref: Path | None, repeat: int) -> None:
    plan_json = json.dumps((HOST_QUICK if report.quick else HOST_FULL).as_json())
    commands: dict[str, list[str]] = {"ours": [sys.executable, "-m", "bench.host_ours"]}
    if ref is not None:
        commands["reference"] = [str(ref), str(REFERENCE_DIR / "host_driver.py"), str(PLUGIN_DIR)]
    drivers = {impl: [*argv, plan_json] for impl, argv in commands.items()}
    runs = Runs()
    for round_ in range(repeat):
        for impl, argv in drivers.items():
            if repeat > 1:
                log(f"round {round_ + 1}/{repeat}")
            run_driver(report, runs, f"host-{impl}", argv, impl == "reference")

    def fig(impl: str, fn: Callable[[dict[str, Any]], float], higher: bool) -> float | None:
        try:
            return runs.figure(f"host-{impl}", fn, higher)
        except RuntimeError as exc:
            report.problem(f"host-{impl}: {exc}")
            return None

    def concurrent_rate(data: dict[str, Any]) -> float:
        rounds = data["concurrent"]
        if any(r["errors"] for r in rounds):
            raise RuntimeError(f"calls failed: {data.get('error_sample')}")
        return stats.median([r["calls"] / r["elapsed"] for r in rounds])

    def row(what: str, unit: str, fn: Callable[[dict[str, Any]], float], **kw: Any) -> Row:
        higher = bool(kw.get("higher_is_better", False))
        row = Row(
            "host -> rt -> plugin",
            what,
            unit,
            ours=fig("ours", fn, higher),
            reference=fig("reference", fn, higher),
            **kw,
        )
        row.runs = {impl: runs.seen.get(f"host-{impl}", []) for impl in ("ours", "reference")}
        return row

    report.add(
        row(
            "call_tool round trip, p50",
            "ms",
            lambda d: stats.median(d["call"]) * 1000,
            target="< 1 ms and <= 0.4x ref",
        ),
        absolute_max(1.0),
        at_most_ref_ratio(0.4),
    )
    report.add(row("call_tool round trip, p95", "ms", lambda d: stats.p95(d["call"]) * 1000))
    report.add(
        row(
            "call_tool CPU time, host + rt + plugin",
            "ms",
            lambda d: sum(d["call_cpu"].values()) * 1000,
            note="per sequential call, summed over the three processes "
            "(less sensitive to load than wall time)",
        )
    )
    refused = {
        impl: sum(result["ungated"]["errors"] for result in results)
        for impl, results in (
            (key.removeprefix("host-"), value) for key, value in runs.results.items()
        )
    }
    report.add(
        row(
            "200 concurrent call_tool (<= 128 in flight)",
            "calls/s",
            concurrent_rate,
            higher_is_better=True,
            target=">= 4x ref (issue: 3x)",
            note="one ungated burst of 200 per run besides; calls refused in all runs: "
            + ", ".join(f"{impl} {n}" for impl, n in refused.items()),
        ),
        at_least_ref_gain(4.0),
    )
    if ref is not None:
        paired_burst_row(report, commands)  # waits for a calm machine itself
    report.add(
        row(
            "plugin spawn -> registered, median",
            "s",
            lambda d: stats.median(d["spawn"]),
            target="< 0.3 s",
        ),
        absolute_max(0.3),
    )
    report.add(
        row(
            "plugin spawn -> registered, CPU time of the plugin",
            "s",
            lambda d: stats.median(d["spawn_cpu"]),
        )
    )
    for who in ("runtime", "plugin"):
        report.add(
            row(
                f"idle RSS, {who} process",
                "MB",
                lambda d, w=who: d["rss"][w],
                target="less than ref",
            ),
            below_ref(),
        )
    cancel_section(report, repeat)
    spawn_section(report, repeat, fig("reference", lambda d: stats.median(d["spawn"]), False))
    shared_section(report, repeat)
    confine_section(report, repeat)
    observe_section(report, repeat)


def spawn_section(report: Report, repeat: int, reference: float | None) -> None:
    """Installed plugins' workers: forked from the template, a fresh interpreter,
    confined (``bench.spawn_ours``, the runtime's Supervisor in-process; issue 22)."""
    runs = Runs()
    argv = [sys.executable, "-m", "bench.spawn_ours", "5" if report.quick else "15"]
    for round_ in range(repeat):
        if repeat > 1:
            log(f"round {round_ + 1}/{repeat}")
        run_driver(report, runs, "spawn-ours", argv, False)
    key = "spawn-ours"
    fresh = "raw column: a fresh interpreter (--worker-start exec), interleaved"

    def row(what: str, unit: str, fn: Callable[[dict[str, Any]], float], **kw: Any) -> Row:
        mode = kw.pop("mode", "template")
        made = Row(
            "host -> rt -> plugin",
            what,
            unit,
            ours=runs.figure(key, lambda d: fn(d[mode])),
            raw=runs.figure(key, lambda d: fn(d["fresh"])),
            **kw,
        )
        made.runs = {"ours": runs.seen.get(key, [])}
        return made

    def p90(samples: list[float]) -> float:
        ordered = sorted(samples)
        return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]

    spawn = row(
        "installed plugin: spawn -> registered, forked, median",
        "s",
        lambda d: stats.median(d["spawn"]),
        target="<= 0.05 s (issue 22)",
        note=f"{fresh}; reference column: its `lbp run` spawn from the rows above",
    )
    spawn.reference = reference
    report.add(spawn, absolute_max(0.05))
    report.add(
        row(
            "installed plugin: spawn -> registered, forked, p90",
            "s",
            lambda d: p90(d["spawn"]),
            note=fresh,
        )
    )
    report.add(
        row(
            "installed plugin: spawn -> registered, CPU time of the worker, forked",
            "s",
            lambda d: stats.median(d["spawn_cpu"]),
            note=f"{fresh}; a forked worker's from the fork (the template imported once)",
        )
    )
    report.add(
        row(
            "installed plugin: crash -> registered again, forked, median",
            "s",
            lambda d: stats.median(d["restart"]),
            note=f"{fresh}; from the kill, with no restart backoff",
        )
    )
    report.add(
        row(
            "installed plugin: spawn -> registered, confined, median",
            "s",
            lambda d: stats.median(d["spawn"]),
            mode="confined",
            note=f"{fresh}; a confined worker keeps a fresh interpreter in its jail",
        )
    )
    first = (runs.results.get(key) or [{}])[0]
    template = first.get("template", {}).get("template", {})
    spare = ", ".join(f"{name.upper()} {mb:.1f}" for name, mb in template.items())
    for label, field_ in (("RSS", "rss"), ("PSS", "pss"), ("USS (private)", "uss")):
        made = row(
            f"idle {label} of one installed worker, forked",
            "MB",
            lambda d, f=field_: d["worker"][f],
            note=f"{fresh}; the template itself (once per runtime): {spare} MB",
        )
        if field_ == "rss":
            made.target = "< 30 MB (issue 22)"
            report.add(made, absolute_max(30.0))
        else:
            report.add(made)


def shared_section(report: Report, repeat: int) -> None:
    """Twenty and fifty plugins in ``shared-runtime-v1`` against one dedicated worker:
    ours only (the reference shares a worker only between installations of one package)."""
    for count in (20, 50):
        shared_rows(report, repeat, count)


def shared_rows(report: Report, repeat: int, count: int) -> None:
    runs = Runs()
    argv = [sys.executable, "-m", "bench.shared_ours", str(count)]
    if report.quick or count > 20:  # fifty dedicated workers: too much for this machine
        argv.append("--quick")
    key = f"shared-ours-{count}"
    for round_ in range(repeat):
        if repeat > 1:
            log(f"round {round_ + 1}/{repeat}")
        run_driver(report, runs, key, argv, False)
    shared = runs.figure(key, lambda d: d["shared"])
    seen = runs.seen.get(key, [])
    one = runs.figure(key, lambda d: d["dedicated_one"])
    every = [r.get("dedicated_all") for r in runs.results.get(key, [])]
    scale = [v for v in every if isinstance(v, int | float)]
    row = Row(
        "host -> rt -> plugin",
        f"idle RSS, {count} plugins in one shared-runtime-v1 worker",
        "MB",
        ours=shared,
        raw=one,
        target="<= 2x one dedicated worker (issue 9)",
        note="raw column: one dedicated worker of the same plugin"
        + (f"; {count} dedicated workers: {min(scale):.0f} MB" if scale else ""),
    )
    row.runs = {"ours": seen}
    report.add(row, within_raw(2.0))


def confine_section(report: Report, repeat: int) -> None:
    """Installed plugins confined (``--confine auto``) against not (``--confine off``):
    ours only, both runtimes in one run (issue 27)."""
    runs = Runs()
    argv = [sys.executable, "-m", "bench.confine_ours", "3" if report.quick else "7"]
    for round_ in range(repeat):
        if repeat > 1:
            log(f"round {round_ + 1}/{repeat}")
        run_driver(report, runs, "confine-ours", argv, False)
    results = runs.results.get("confine-ours", [])
    if results and "workers are confined" not in results[0]["auto"]["mode"]:
        report.problem(f"confine-ours: workers were not confined: {results[0]['auto']['mode']}")
    raw_note = "raw column: the same runtime with --confine off, installs interleaved"

    def row(what: str, unit: str, fn: Callable[[dict[str, Any]], float], note: str) -> Row:
        confined = runs.figure("confine-ours", lambda d: fn(d["auto"]))
        seen = runs.seen.get("confine-ours", [])
        off = runs.figure("confine-ours", lambda d: fn(d["off"]))
        made = Row("host -> rt -> plugin", what, unit, ours=confined, raw=off, note=note)
        made.runs = {"ours": seen, "raw": runs.seen.get("confine-ours", [])}
        return made

    spawn = row(
        "installed plugin: package -> running, confined, median",
        "s",
        lambda d: stats.median(d["spawn"]),
        f"{raw_note}; transfer, unpack, jail, spawn and registration",
    )
    spawn.target = "<= 1.2x unconfined"
    report.add(spawn, within_raw(1.2))
    private = [r["auto"]["jail_private"] for r in results]
    jail = [r["auto"]["jail_rss"] for r in results]
    memory = row(
        "idle RSS of one installed worker, confined (worker + its nsjail)",
        "MB",
        lambda d: d["worker_rss"] + d["jail_rss"],
        f"{raw_note}; nsjail: RSS {min(jail, default=0):.1f} MB, of it private "
        f"{min(private, default=0):.1f} MB (its file pages are shared by every jail)",
    )
    memory.target = "<= unconfined + 10 MB RSS"
    report.add(memory, within_raw_plus(10.0))


def observe_section(report: Report, repeat: int) -> None:
    """call_tool with the request metrics off, on (traces off), and traces on: ours only,
    the three runtimes up at once and their calls interleaved (issue 21)."""
    runs = Runs()
    argv = [sys.executable, "-m", "bench.observe_ours"]
    argv += ["1", "300"] if report.quick else ["3", "1000"]
    for round_ in range(repeat):
        if repeat > 1:
            log(f"round {round_ + 1}/{repeat}")
        run_driver(report, runs, "observe-ours", argv, False)

    def p50(variant: str) -> Callable[[dict[str, Any]], float]:
        return lambda d: stats.median([s for r in d[variant] for s in r["call"]]) * 1000

    def cpu(variant: str) -> Callable[[dict[str, Any]], float]:
        return lambda d: stats.median([sum(r["cpu"].values()) for r in d[variant]]) * 1000

    def row(
        what: str,
        unit: str,
        fn: Callable[[str], Callable[[dict[str, Any]], float]],
        *,
        variant: str,
        baseline: str,
        note: str,
    ) -> Row:
        ours = runs.figure("observe-ours", fn(variant))
        ours_runs = runs.seen.get("observe-ours", [])
        raw = runs.figure("observe-ours", fn(baseline))
        made = Row("host -> rt -> plugin", what, unit, ours=ours, raw=raw, note=note)
        made.runs = {"ours": ours_runs, "raw": runs.seen.get("observe-ours", [])}
        return made

    off = "raw column: the same runtime and plugin with LBP_METRICS=off, calls interleaved"
    untraced = "raw column: the same with traces off (metrics on), calls interleaved"
    exported = "; spans exported with OTLP/HTTP to a local sink, default batching"
    metrics = row(
        "call_tool p50, metrics on, traces off",
        "ms",
        p50,
        variant="metrics_on",
        baseline="metrics_off",
        note=off,
    )
    metrics.target = "<= 1.05x metrics off (issue 21)"
    report.add(metrics, within_raw(1.05))
    report.add(
        row(
            "call_tool CPU time, rt + plugin, metrics on, traces off",
            "ms",
            cpu,
            variant="metrics_on",
            baseline="metrics_off",
            note=f"{off}; per sequential call",
        )
    )
    report.add(
        row(
            "call_tool p50, traces on",
            "ms",
            p50,
            variant="traces_on",
            baseline="metrics_on",
            note=untraced + exported,
        )
    )
    report.add(
        row(
            "call_tool CPU time, rt + plugin, traces on",
            "ms",
            cpu,
            variant="traces_on",
            baseline="metrics_on",
            note=f"{untraced}{exported}; per sequential call",
        )
    )


def cancel_section(report: Report, repeat: int) -> None:
    """host cancel -> runner stopped: ours only (the reference never closes the runner)."""
    rounds = "5" if report.quick else "20"
    runs = Runs()
    for round_ in range(repeat):
        if repeat > 1:
            log(f"round {round_ + 1}/{repeat}")
        run_driver(
            report, runs, "cancel-ours", [sys.executable, "-m", "bench.cancel_ours", rounds], False
        )
    note = (
        "ours only: the reference has no real cancellation (a flag its runners poll); "
        f"{rounds} cancels per run; the slowest of them all"
    )
    for what, key in (
        ("run ended cancelled at the host", "ended"),
        ("runner's generator closed", "closed"),
    ):
        runs.figure("cancel-ours", lambda d, k=key: max(d[k]) * 1000)
        slowest = runs.seen.get("cancel-ours", [])
        row = Row(
            "host -> rt -> plugin",
            f"host cancel -> {what}, slowest",
            "ms",
            ours=max(slowest) if slowest else None,
            target="< 1 s (issue 4)",
            note=note,
        )
        row.runs = {"ours": slowest}
        report.add(row, absolute_max(1000.0))


# ----------------------------------------------------------------------------- cli


def cli_section(report: Report, ref: Path | None, repeat: int) -> None:
    runs = 5 if report.quick else 10
    ours_lbp = Path(sys.executable).parent / "lbp"
    ref_lbp = ref.parent / "lbp" if ref is not None else None
    best = Runs.aggregate == "best"

    def measure(argv: list[str], env: dict[str, str] | None = None) -> float | None:
        wait_for_idle_cpu()
        try:
            samples = time_command(argv, runs, env)
        except (OSError, RuntimeError) as exc:
            report.problem(f"cli {' '.join(argv)}: {exc}")
            return None
        return min(samples) if best else stats.median(samples)

    log("cli: lbp --help / lbp ver")
    floor = measure([sys.executable, "-c", "pass"])
    for args in (["--help"], ["ver"]):
        report.add(
            Row(
                "CLI",
                f"lbp {' '.join(args)}, {'best' if best else 'median'} of {runs}",
                "s",
                ours=measure([str(ours_lbp), *args]),
                reference=measure([str(ref_lbp), *args], reference_env()) if ref_lbp else None,
                raw=floor,
                target="< 0.15 s",
                note="raw column: `python -c pass`",
            ),
            absolute_max(0.15),
        )


# ----------------------------------------------------------------------------- box


def box_modules(only: list[str] | None = None) -> list[str]:
    here = Path(__file__).resolve().parent
    names = sorted(path.stem for path in here.glob("box_*.py"))
    return [f"bench.{name}" for name in names if not only or name in only]


def _takes_report(hook: Any) -> bool:
    try:
        return len(inspect.signature(hook).parameters) == 1
    except (TypeError, ValueError):
        return False


def box_section(
    report: Report, ref: Path | None, repeat: int, only: list[str] | None = None
) -> None:
    """Run each ``bench/box_*.py``: ``async def run(report)`` adds rows to our table;
    a module with ``main(argv) -> int`` instead runs as ``python -m bench.box_x`` and
    its own output is shown after the table."""
    if ref is not None:  # box_bench's variable, for the modules run here and as children
        os.environ.setdefault("LBP_REFERENCE_VENV", str(ref.parent.parent))
    env = dict(os.environ)
    for name in box_modules(only):
        log(f"box: {name}")
        try:
            module = importlib.import_module(name)
            hook = getattr(module, "run", None)
            if hook is not None and inspect.iscoroutinefunction(hook) and _takes_report(hook):
                asyncio.run(hook(report))
                continue
            if not callable(getattr(module, "main", None)):
                report.problem(f"{name}: neither `async def run(report)` nor `main(argv)`")
                continue
            proc = subprocess.run(
                [sys.executable, "-m", name], capture_output=True, text=True, env=env, check=False
            )
            LOG_DIR.mkdir(parents=True, exist_ok=True)
            (LOG_DIR / f"{name.removeprefix('bench.')}.log").write_text(proc.stderr)
            report.extra.append((name, proc.stdout.strip()))
            if proc.returncode != 0:
                tail = " | ".join(proc.stderr.strip().splitlines()[-2:])
                report.problem(f"{name} exited {proc.returncode}: {tail}")
        except Exception as exc:
            traceback.print_exc()
            report.problem(f"{name}: {exc!r}")


# ----------------------------------------------------------------------------- main


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench", description=(__doc__ or "").split("\n")[0]
    )
    parser.add_argument(
        "names",
        nargs="*",
        help="sections (rpc, host, cli, curves, box) or box modules (e.g. box_bench); default all",
    )
    parser.add_argument("--quick", action="store_true", help="fewer samples (a smoke run)")
    parser.add_argument("--only", action="append", choices=SECTIONS, help="run only SECTION")
    parser.add_argument(
        "--repeat", type=int, default=None, help="runs per driver (default 3; 1 with --quick)"
    )
    parser.add_argument(
        "--aggregate",
        choices=("best", "median"),
        default="best",
        help="how repeated runs combine (default: the best run)",
    )
    parser.add_argument("--json", type=Path, default=REPO / ".bench" / "results.json")
    parser.add_argument("--markdown", type=Path, default=None, help="also write the table here")
    args = parser.parse_args(argv)
    box_only = [n for n in args.names if n.startswith("box_")]
    unknown = [n for n in args.names if n not in SECTIONS and not n.startswith("box_")]
    if unknown:
        parser.error(f"unknown section or module: {', '.join(unknown)}")
    picked = [n for n in args.names if n in SECTIONS] + (["box"] if box_only else [])
    sections = (args.only or []) + picked or list(SECTIONS)
    repeat = args.repeat or (1 if args.quick else 3)
    Runs.aggregate = args.aggregate

    byte_compile()
    if not args.quick:
        wait_for_quiet()
    report = Report(quick=args.quick)
    ref: Path | None = None
    if sections:
        try:
            ref = reference_python()
            report.reference_python = ref
        except ReferenceUnavailable as exc:
            report.problem(f"reference: {exc}")
    info = machine()
    info["runs per driver"] = f"{repeat}, combined: {args.aggregate}"
    if ref is not None:
        shown = ref.relative_to(REPO) if ref.is_relative_to(REPO) else ref  # no machine path
        info["reference"] = f"langbot-plugin {reference_version(ref)} ({shown})"
        probe = subprocess.run(
            [
                str(ref),
                "-c",
                "import websockets, pydantic; print(websockets.__version__, pydantic.VERSION)",
            ],
            capture_output=True,
            text=True,
            check=False,
            env=reference_env(),
        )
        info["reference websockets, pydantic"] = probe.stdout.strip()
    log(f"machine: {info}")

    def curves(report: Report, ref: Path | None, repeat: int) -> None:
        del repeat  # one run: each is minutes (50 plugins a side)
        curves_section(report, ref, 1, run_driver, Runs)

    handlers = {"rpc": rpc_section, "host": host_section, "cli": cli_section, "curves": curves}
    for name in SECTIONS:
        if name not in sections:
            continue
        if name == "box":
            box_section(report, ref, repeat, box_only or None)
        else:
            handlers[name](report, ref, repeat)

    info["load average at end"] = load_average()
    if report.rows or report.problems:
        print(report.text_table())
    for name, output in report.extra:
        print(f"\n== {name}\n{output}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(report.to_json(info) + "\n")
    log(f"results written to {args.json}")
    if args.markdown is not None:
        header = "\n".join(f"- {key}: {value}" for key, value in info.items())
        args.markdown.write_text(f"{header}\n\n{report.markdown_table()}\n")
        log(f"markdown table written to {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
