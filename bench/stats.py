"""Summaries of raw samples (all samples are seconds unless said otherwise)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

__all__ = ["median", "p95", "rate"]


def median(samples: Sequence[float]) -> float:
    return statistics.median(samples)


def p95(samples: Sequence[float]) -> float:
    if len(samples) < 2:
        return samples[0]
    return statistics.quantiles(samples, n=100, method="inclusive")[94]


def rate(count: float, seconds: float) -> float:
    return count / seconds
