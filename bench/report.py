"""Rows of results, their targets, and the table they print as.

Every measurement becomes a :class:`Row`: ours, the reference and (where it means
something) the raw engine, in one unit, with the target it is judged against. Targets
are small functions of the row, so the verdict and the evidence are computed in one
place. ``bench/box_*.py`` modules add their rows through the same :class:`Report`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "Report",
    "Row",
    "Target",
    "absolute_max",
    "at_least_ref_gain",
    "at_most_ref_ratio",
    "below_ref",
    "within_raw",
    "within_raw_plus",
]

#: A target: given the row, (met?, evidence) or ``None`` when it cannot be judged.
Target = Callable[["Row"], tuple[bool, str] | None]


@dataclass
class Row:
    section: str
    what: str
    unit: str
    ours: float | None = None
    reference: float | None = None
    raw: float | None = None
    higher_is_better: bool = False
    target: str = ""
    met: bool | None = None
    evidence: str = ""
    note: str = ""
    #: Per-run values behind each figure (when the section repeats its drivers).
    runs: dict[str, list[float]] = field(default_factory=dict[str, list[float]])

    def gain(self) -> float | None:
        """How many times better ours is than the reference (> 1: better)."""
        if self.ours is None or self.reference is None or not self.ours or not self.reference:
            return None
        return self.ours / self.reference if self.higher_is_better else self.reference / self.ours


def within_raw(factor: float) -> Target:
    def check(row: Row) -> tuple[bool, str] | None:
        if row.ours is None or row.raw is None:
            return None
        ratio = row.raw / row.ours if row.higher_is_better else row.ours / row.raw
        return ratio <= factor, f"{ratio:.2f}x raw"

    return check


def within_raw_plus(margin: float) -> Target:
    """Ours at most ``margin`` (in the row's unit) above the raw column."""

    def check(row: Row) -> tuple[bool, str] | None:
        if row.ours is None or row.raw is None:
            return None
        return row.ours <= row.raw + margin, f"{row.ours - row.raw:+.1f} {row.unit}"

    return check


def at_least_ref_gain(factor: float) -> Target:
    def check(row: Row) -> tuple[bool, str] | None:
        gain = row.gain()
        if gain is None:
            return None
        return gain >= factor, f"{gain:.1f}x ref"

    return check


def at_most_ref_ratio(ratio: float) -> Target:
    def check(row: Row) -> tuple[bool, str] | None:
        if row.ours is None or row.reference is None:
            return None
        value = row.ours / row.reference
        return value <= ratio, f"{value:.2f}x ref"

    return check


def absolute_max(limit: float) -> Target:
    def check(row: Row) -> tuple[bool, str] | None:
        if row.ours is None:
            return None
        return row.ours <= limit, f"{_fmt(row.ours)} {row.unit}"

    return check


def below_ref() -> Target:
    def check(row: Row) -> tuple[bool, str] | None:
        if row.ours is None or row.reference is None:
            return None
        return row.ours < row.reference, f"{row.ours / row.reference:.2f}x ref"

    return check


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


@dataclass
class Report:
    """What a benchmark section (ours or a ``bench/box_*.py`` module) writes into."""

    quick: bool = False
    reference_python: Path | None = None
    rows: list[Row] = field(default_factory=list[Row])
    problems: list[str] = field(default_factory=list[str])
    #: (module, text) printed after the table by modules that report on their own.
    extra: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])

    def add(self, row: Row, *checks: Target) -> Row:
        """Add ``row``; every check must pass for the row to count as met."""
        verdicts = [v for v in (check(row) for check in checks) if v is not None]
        if checks and len(verdicts) == len(checks):
            row.met = all(ok for ok, _ in verdicts)
        row.evidence = ", ".join(text for _, text in verdicts)
        self.rows.append(row)
        return row

    def problem(self, text: str) -> None:
        """Record something that could not be measured (shown under the table)."""
        self.problems.append(text)

    # ------------------------------------------------------------------ output

    COLUMNS = ("what", "reference", "raw engine", "ours", "unit", "gain vs ref", "target", "met?")

    def _cells(self, row: Row) -> list[str]:
        gain = row.gain()
        verdict = {True: "yes", False: "NO", None: "-"}[row.met]
        if row.evidence:
            verdict += f" ({row.evidence})"
        return [
            row.what,
            _fmt(row.reference),
            _fmt(row.raw),
            _fmt(row.ours),
            row.unit,
            f"{gain:.1f}x" if gain is not None else "-",
            row.target or "-",
            verdict,
        ]

    def text_table(self) -> str:
        table = [list(self.COLUMNS)] + [self._cells(row) for row in self.rows]
        widths = [max(len(line[i]) for line in table) for i in range(len(self.COLUMNS))]
        lines = []
        section = None
        for index, cells in enumerate(table):
            if index and self.rows[index - 1].section != section:
                section = self.rows[index - 1].section
                lines.append(f"-- {section}")
            padded = (cell.ljust(width) for cell, width in zip(cells, widths, strict=True))
            lines.append("  ".join(padded))
            if index == 0:
                lines.append("  ".join("-" * width for width in widths))
        lines.extend(
            f"note: {row.section}, {row.what}: {row.note}" for row in self.rows if row.note
        )
        lines.extend(f"not measured: {text}" for text in self.problems)
        return "\n".join(lines)

    def markdown_table(self) -> str:
        lines = [
            "| " + " | ".join(self.COLUMNS) + " |",
            "|" + "---|" * len(self.COLUMNS),
        ]
        section = None
        for row in self.rows:
            if row.section != section:
                section = row.section
                lines.append(f"| **{section}** |" + " |" * (len(self.COLUMNS) - 1))
            lines.append("| " + " | ".join(self._cells(row)) + " |")
        lines.append("")
        lines.extend(f"- {row.section}, {row.what}: {row.note}" for row in self.rows if row.note)
        lines.extend(f"- not measured: {text}" for text in self.problems)
        return "\n".join(lines)

    def to_json(self, machine: dict[str, Any]) -> str:
        return json.dumps(
            {
                "machine": machine,
                "quick": self.quick,
                "rows": [asdict(row) for row in self.rows],
                "problems": self.problems,
                "other_output": dict(self.extra),
            },
            indent=2,
        )
