"""Scraping a daemon's ``/metrics`` over HTTP and reading it with Prometheus' own parser."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass

import anyio
from prometheus_client.parser import text_string_to_metric_families

__all__ = ["Scrape", "fetch", "scrape"]


@dataclass(frozen=True, slots=True)
class Scrape:
    """One scrape: each sample by its name and labels."""

    samples: dict[tuple[str, frozenset[tuple[str, str]]], float]
    content_type: str

    def value(self, name: str, **labels: str) -> float | None:
        """The sample of exactly these labels (``None``: not exposed)."""
        return self.samples.get((name, frozenset(labels.items())))

    def total(self, name: str, **labels: str) -> float:
        """The sum of the samples named ``name`` whose labels include ``labels``."""
        wanted = set(labels.items())
        return sum(v for (n, ls), v in self.samples.items() if n == name and wanted <= ls)

    def outcomes(self, name: str, **labels: str) -> dict[str, float]:
        """``outcome`` label -> value, over the samples that match ``labels``."""
        wanted = set(labels.items())
        found: dict[str, float] = {}
        for (n, ls), v in self.samples.items():
            if n == name and wanted <= ls:
                outcome = dict(ls).get("outcome", "")
                found[outcome] = found.get(outcome, 0.0) + v
        return found


def fetch(url: str, headers: Mapping[str, str] | None = None) -> tuple[int, str, str]:
    """GET ``url``: status, body, content type (an HTTP error's too)."""
    request = urllib.request.Request(url, headers=dict(headers or {}))
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            body = answer.read().decode()
            return answer.status, body, answer.headers.get("Content-Type", "")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace"), exc.headers.get("Content-Type", "")


async def scrape(url: str, headers: Mapping[str, str] | None = None) -> Scrape:
    """``url`` (a ``/metrics``) fetched and parsed; fails unless it answers 200."""
    status, body, content_type = await anyio.to_thread.run_sync(lambda: fetch(url, headers))
    assert status == 200, body
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    for family in text_string_to_metric_families(body):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return Scrape(samples, content_type)
