"""``curves``: how a cost grows with the work, ours and the reference side by side.

* call_tool p50 and p99 against plugins loaded (1, 10, 50 ``lbp run`` debug plugins on
  one runtime; :mod:`bench.curve_plugins_ours`, ``bench/reference/curve_driver.py``);
  also the runtime's RSS at each size.

The Box curves (exec and session create against live sessions, the relay against MCP
servers) are ``bench/box_curves.py``, part of the ``box`` section. Each point is a row
of the common table; a row's "target" names the previous point it is compared with:
growth no worse than linear in the work where the reference is linear.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import stats
from bench.report import Report, Row

__all__ = ["PLUGIN_SIZES", "curves_section"]

PLUGIN_SIZES = (1, 10, 50)
QUICK_PLUGIN_SIZES = (1, 3)
SECTION = "curve: call_tool against plugins loaded"
#: A figure of one size's samples.
Point = Callable[[dict[str, Any]], float]


def curves_section(
    report: Report,
    ref: Path | None,
    repeat: int,
    run_driver: Callable[..., None],
    runs_factory: Callable[[], Any],
) -> None:
    """The plugins curve (``run_driver``/``runs_factory``: ``bench.__main__``'s)."""
    sizes = QUICK_PLUGIN_SIZES if report.quick else PLUGIN_SIZES
    plan = json.dumps({"sizes": list(sizes), "calls": 100 if report.quick else 500, "warmup": 20})
    here = Path(__file__).resolve().parent
    drivers = {"ours": [sys.executable, "-m", "bench.curve_plugins_ours", plan]}
    if ref is not None:
        drivers["reference"] = [
            str(ref),
            str(here / "reference" / "curve_driver.py"),
            str(here / "plugins" / "echotool"),
            plan,
        ]
    runs = runs_factory()
    for _ in range(repeat):
        for impl, argv in drivers.items():
            run_driver(report, runs, f"curve-plugins-{impl}", argv, impl == "reference")

    def fig(impl: str, size: int, fn: Point) -> float | None:
        def at_size(data: dict[str, Any]) -> float:
            return fn(data["sizes"][str(size)])

        try:
            return runs.figure(f"curve-plugins-{impl}", at_size)
        except (KeyError, TypeError) as exc:
            report.problem(f"curve-plugins-{impl}: size {size}: {exc!r}")
            return None

    measures: tuple[tuple[str, str, Point], ...] = (
        ("call_tool p50", "ms", lambda d: stats.median(d["call"]) * 1000),
        ("call_tool p99", "ms", lambda d: stats.p99(d["call"]) * 1000),
        ("runtime RSS", "MB", lambda d: float(d["rt_rss"])),
    )
    for label, unit, fn in measures:
        for size in sizes:
            loaded = f"{size} plugin{'s' if size > 1 else ''} loaded"
            row = Row(
                SECTION,
                f"{label}, {loaded}",
                unit,
                ours=fig("ours", size, fn),
                reference=fig("reference", size, fn),
            )
            report.add(row)
