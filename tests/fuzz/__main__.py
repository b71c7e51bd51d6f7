"""``python -m tests.fuzz`` (``make fuzz``): the wire fuzzer's campaign for minutes.

The same campaign as ``tests/fuzz/test_wire_fuzz.py`` (every link of ``lbp rt`` and
``lbp box``), run round after round until the time is up, with a fresh seed unless one
is given. Prints, per daemon, the frames sent, the coded errors and clean closes they
got, the findings, and the daemon's resident memory at the start and the end; exits 1
on any finding, traceback or exit. ``FUZZ_ARGS="--minutes 10 --daemon rt"`` from make.
"""

from __future__ import annotations

import argparse
import logging
import secrets
import sys
import tempfile
from pathlib import Path

import anyio

from tests.fuzz.campaign import Budget, Report, fuzz_box, fuzz_runtime


def _dump_tasks() -> None:
    """SIGUSR1: print where every task of the fuzzer waits (to find a hang)."""
    import asyncio

    for task in asyncio.all_tasks():
        print(f"task {task.get_name()}:", file=sys.stderr)
        coro = task.get_coro()
        while coro is not None:
            frame = getattr(coro, "cr_frame", None) or getattr(coro, "ag_frame", None)
            if frame is not None:
                print(
                    f"  {frame.f_code.co_filename}:{frame.f_lineno} {frame.f_code.co_name}",
                    file=sys.stderr,
                )
            coro = getattr(coro, "cr_await", None) or getattr(coro, "ag_await", None)


async def _run(args: argparse.Namespace) -> list[Report]:
    import asyncio
    import signal

    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, _dump_tasks)

    def progress(report: Report) -> None:
        total = report.total
        print(
            f"  round {report.rounds}: {report.seconds:.0f} s, {total.frames} frames, "
            f"{total.coded_errors} coded errors, {len(total.findings)} findings",
            flush=True,
        )

    budget = Budget(
        batches=args.batches,
        batch_size=args.batch_size,
        seconds=args.minutes * 60,
        progress=progress,
    )
    reports: list[Report] = []
    for daemon in ("rt", "box") if args.daemon == "both" else (args.daemon,):
        seed = args.seed if args.seed is not None else secrets.randbelow(1_000_000)
        print(f"fuzzing lbp {daemon} for {args.minutes:g} min, seed {seed} ...", flush=True)
        with tempfile.TemporaryDirectory(prefix=f"lbp-fuzz-{daemon}-") as folder:
            if daemon == "rt":
                report = await fuzz_runtime(Path(folder), seed, budget)
            else:
                report = await fuzz_box(Path(folder), seed, budget, backend=args.backend)
        print(report.describe(), flush=True)
        if args.log is not None:
            await anyio.Path(f"{args.log}.{daemon}").write_text("\n".join(report.log) + "\n")
        reports.append(report)
    return reports


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    parser.add_argument("--daemon", choices=("rt", "box", "both"), default="both")
    parser.add_argument("--minutes", type=float, default=10.0, help="per daemon")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--batches", type=int, default=10, help="per link and round")
    parser.add_argument("--batch-size", type=int, default=25)
    parser.add_argument("--backend", default="nsjail", help="the Box's sandbox backend")
    parser.add_argument(
        "--log", default=None, help="write each daemon's stderr to LOG.rt / LOG.box"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    reports = anyio.run(_run, args)
    return 0 if all(report.ok for report in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
