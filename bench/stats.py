"""Summaries of raw samples (all samples are seconds unless said otherwise)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

__all__ = ["median", "ms", "p95", "p99", "rate", "ratio"]


def median(samples: Sequence[float]) -> float:
    return statistics.median(samples)


def p95(samples: Sequence[float]) -> float:
    if len(samples) < 2:
        return samples[0]
    return statistics.quantiles(samples, n=100, method="inclusive")[94]


def p99(samples: Sequence[float]) -> float:
    if len(samples) < 2:
        return samples[0]
    return statistics.quantiles(samples, n=100, method="inclusive")[98]


def rate(count: float, seconds: float) -> float:
    return count / seconds


def ms(value: float | None, digits: int = 1) -> str:
    """A table cell for milliseconds; ``-`` where nothing was measured."""
    return f"{value:.{digits}f} ms" if value is not None else "-"


def ratio(a: float | None, b: float | None) -> str:
    """A table cell for ``a / b``; ``-`` where either side is missing."""
    return f"{a / b:.2f}x" if a and b else "-"
