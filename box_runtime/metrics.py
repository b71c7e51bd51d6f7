"""``lbp box``'s metrics: what ``GET /metrics`` answers (Prometheus text).

One registry per :class:`~box_runtime.service.BoxService` (:class:`BoxMetrics`), so two
Boxes in one process count apart. Requests are counted by the service's middleware
(:class:`~langbot_plugin.rpc.metrics.RequestMetrics`), events and execs from the Box
audit (:mod:`box_runtime.audit`); sessions, processes, connections and the pool are read
when scraped. The families: docs/operations.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from box_runtime.audit import AuditEvent
from box_runtime.runtime import BoxRuntime
from langbot_plugin.rpc.metrics import RequestMetrics, exposition

__all__ = ["PREFIX", "BoxMetrics"]

PREFIX = "lbp_box"
#: Seconds: a sandbox exec, from a few milliseconds to its longest timeout.
_EXEC_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)


class BoxMetrics:
    """A Box's registry, fed by its action table and its runtime's audit."""

    def __init__(self, runtime: BoxRuntime, connections: Callable[[], int]) -> None:
        self.registry = CollectorRegistry()
        self.requests = RequestMetrics(self.registry, PREFIX)
        self.events = Counter(
            f"{PREFIX}_events",
            "Audited session events, by kind (session.create, exec, process.start, ...).",
            ("kind",),
            registry=self.registry,
        )
        self.execs = Counter(
            f"{PREFIX}_execs",
            "Commands run in sandboxes, by backend and status (completed, timed_out, "
            "or the error code).",
            ("backend", "status"),
            registry=self.registry,
        )
        self.exec_duration = Histogram(
            f"{PREFIX}_exec_duration_seconds",
            "Seconds a command ran in its sandbox, by backend.",
            ("backend",),
            registry=self.registry,
            buckets=_EXEC_BUCKETS,
        )
        self._relay_frames = Counter(
            f"{PREFIX}_relay_frames",
            "Managed-process relay frames, by direction (to_process, to_client, refused).",
            ("direction",),
            registry=self.registry,
        )
        self._relay_children: dict[str, Counter] = {}
        runtime.audit.listeners.append(self._audited)
        self.registry.register(_StateCollector(runtime, connections))

    def _audited(self, event: AuditEvent) -> None:
        self.events.labels(event.kind).inc()
        if event.kind != "exec":
            return
        backend = event.backend or ""
        self.execs.labels(backend, event.status or event.error or "unknown").inc()
        if event.duration_ms is not None:
            self.exec_duration.labels(backend).observe(event.duration_ms / 1000)

    def relay_frame(self, direction: str) -> None:
        """One relay frame passed on or refused (``box_runtime.relay.FrameCount``)."""
        child = self._relay_children.get(direction)
        if child is None:
            child = self._relay_children[direction] = self._relay_frames.labels(direction)
        child.inc()

    def text(self) -> bytes:
        return exposition(self.registry)


class _StateCollector(Collector):
    def __init__(self, runtime: BoxRuntime, connections: Callable[[], int]) -> None:
        self._runtime = runtime
        self._connections = connections

    def collect(self) -> Iterable[Metric]:
        runtime = self._runtime
        yield GaugeMetricFamily(
            f"{PREFIX}_sessions",
            "Live sandbox sessions (being created included).",
            value=runtime.count(),
        )
        yield GaugeMetricFamily(
            f"{PREFIX}_managed_processes",
            "Managed processes running in sessions.",
            value=runtime.processes.running_count(),
        )
        yield GaugeMetricFamily(
            f"{PREFIX}_connections", "Action-RPC connections.", value=self._connections()
        )
        pool = runtime.pool_status()
        gauges = (
            ("target", "Warm sandboxes the pool works toward.", pool.target),
            ("ready", "Warm sandboxes ready to adopt.", pool.ready),
            ("refilling", "Warm sandboxes being created.", pool.refilling),
        )
        for name, text, value in gauges:
            yield GaugeMetricFamily(f"{PREFIX}_pool_{name}", text, value=value)
        yield CounterMetricFamily(
            f"{PREFIX}_pool_adopted", "Sessions that adopted a warm sandbox.", value=pool.adopted
        )
        yield CounterMetricFamily(
            f"{PREFIX}_pool_created", "Warm sandboxes the pool created.", value=pool.created
        )
