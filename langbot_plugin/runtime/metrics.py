"""``lbp rt``'s metrics: what ``GET /metrics`` on its ports answers (Prometheus text).

One registry per runtime (:class:`RuntimeMetrics`), so two runtimes in one process
count apart: the request metrics of the ``control`` and ``plugin`` links, worker
restarts, and gauges read when scraped (the names: docs/operations.md).
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from langbot_plugin.rpc.metrics import RequestMetrics, exposition
from langbot_plugin.runtime.plugins import PluginRegistry

__all__ = ["PREFIX", "RuntimeMetrics"]

PREFIX = "lbp_rt"


class RuntimeMetrics:
    """The runtime's registry and the metrics counted as things happen."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = RequestMetrics(self.registry, PREFIX)
        self.worker_restarts = Counter(
            f"{PREFIX}_plugin_worker_restarts",
            "Plugin workers restarted after they exited, by worker (plugin, or shared).",
            ("worker",),
            registry=self.registry,
        )

    def restarted(self, worker: str) -> Callable[[], None]:
        """What to call each time ``worker`` is restarted."""
        return self.worker_restarts.labels(worker).inc

    def watch(
        self,
        plugins: PluginRegistry,
        workers: Callable[[], dict[str, int]],
        live_runs: Callable[[], int],
    ) -> None:
        """Read the runtime's state when scraped: its live plugins and their calls, the
        worker processes by mode (``workers()``), the live runs."""
        self.registry.register(_StateCollector(plugins, workers, live_runs))

    def text(self) -> bytes:
        return exposition(self.registry)


@dataclass(eq=False)
class _StateCollector(Collector):
    _plugins: PluginRegistry
    _workers: Callable[[], dict[str, int]]
    _live_runs: Callable[[], int]

    def collect(self) -> Iterable[Metric]:
        statuses = Tally(handle.container.status for handle in self._plugins)
        plugins = GaugeMetricFamily(
            f"{PREFIX}_plugins", "Live plugins (debug ones included), by status.", labels=["status"]
        )
        for status, count in sorted(statuses.items()):
            plugins.add_metric([status], count)
        yield plugins
        workers = GaugeMetricFamily(
            f"{PREFIX}_plugin_workers",
            "Plugin worker processes the runtime supervises, by mode (dedicated, shared).",
            labels=["mode"],
        )
        for mode, count in sorted(self._workers().items()):
            workers.add_metric([mode], count)
        yield workers
        calls = self._plugins.calls
        yield GaugeMetricFamily(
            f"{PREFIX}_plugin_calls_in_flight",
            "Calls the runtime made to plugins that they have not answered yet.",
            value=len(calls),
        )
        yield CounterMetricFamily(
            f"{PREFIX}_stuck_calls",
            "Plugin calls left unanswered beyond stuck_call_sec.",
            value=calls.stuck_total,
        )
        yield GaugeMetricFamily(
            f"{PREFIX}_live_runs", "Agent runs in progress.", value=self._live_runs()
        )
