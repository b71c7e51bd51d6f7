"""Request metrics of an action table, in Prometheus' registry and text format.

:class:`RequestMetrics` counts ``<prefix>_requests_total{link, action, outcome}``,
``<prefix>_request_duration_seconds`` and ``<prefix>_requests_in_flight`` in one
registry per daemon (never the process-wide default), through the middleware
:meth:`RequestMetrics.put_on` adds to a table unless ``LBP_METRICS=off``
(docs/operations.md). :func:`exposition` is what a ``/metrics`` endpoint answers.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, Self

import anyio
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import generate_latest

from langbot_plugin.rpc.errors import InternalError, RemoteError, RPCError
from langbot_plugin.rpc.routes import Answer, CallNext, Middleware, RequestContext, UsesMiddleware

__all__ = [
    "CANCELLED",
    "CONTENT_TYPE",
    "ENV",
    "MAX_OUTCOMES",
    "OK",
    "OTHER",
    "RequestMetrics",
    "exposition",
    "outcome_of",
]

#: The ``Content-Type`` of :func:`exposition`'s text: the classic text format every
#: Prometheus version reads (our names need none of 1.0.0's escaping).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
#: ``off`` (or ``0``, ``false``) leaves the request middleware off every table.
ENV = "LBP_METRICS"
#: The outcome of a request that succeeded.
OK = "ok"
#: The outcome of a request its caller left (cancelled, or a stream closed early).
CANCELLED = "cancelled"
#: Distinct outcomes kept per action; later ones count as :data:`OTHER` (error codes a
#: peer passes on are its own, and a label value each would grow without bound).
MAX_OUTCOMES = 32
OTHER = "other"
#: Seconds: from a ping-sized call to a long run.
_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


def outcome_of(error: BaseException | str | None) -> str:
    """``ok``, or the wire code ``error`` is answered with (as :mod:`.wire_errors` does);
    a string is an outcome already."""
    if error is None:
        return OK
    if isinstance(error, str):
        return error
    if isinstance(error, RemoteError) and error.remote_code:
        return error.remote_code
    if isinstance(error, RPCError):
        return error.code
    if isinstance(error, anyio.get_cancelled_exc_class()):
        return CANCELLED
    return InternalError.code


def exposition(registry: CollectorRegistry) -> bytes:
    """The registry's metrics in Prometheus' text format (:data:`CONTENT_TYPE`)."""
    return generate_latest(registry)


class RequestMetrics:
    """Counts the requests of the tables it is put on (see the module doc)."""

    def __init__(self, registry: CollectorRegistry, prefix: str) -> None:
        labels = ("link", "action")
        #: False under ``LBP_METRICS=off``: :meth:`put_on` leaves tables as they are,
        #: and the three metrics are not registered (``/metrics`` has no trace of them)
        self.counting = os.environ.get(ENV, "").strip().lower() not in ("off", "0", "false")
        shown = registry if self.counting else None
        self.requests = Counter(
            f"{prefix}_requests",
            "Requests served, by link, action and outcome (ok or the error code).",
            (*labels, "outcome"),
            registry=shown,
        )
        self.duration = Histogram(
            f"{prefix}_request_duration_seconds",
            "Seconds a request took, by link and action (a stream: to its last item).",
            labels,
            registry=shown,
            buckets=_BUCKETS,
        )
        self.in_flight = Gauge(
            f"{prefix}_requests_in_flight",
            "Requests being served, by link and action.",
            labels,
            registry=shown,
        )
        self._children: dict[tuple[str, str], _Children] = {}

    def put_on(self, table: UsesMiddleware, link: str) -> None:
        """Count the requests of ``table`` (outermost so far), unless counting is off."""
        if self.counting:
            table.use(self.middleware(link))

    def middleware(self, link: str) -> Middleware:
        """The middleware that counts each request of a table (``link``: its label)."""

        async def measured(ctx: RequestContext, call_next: CallNext) -> Answer:
            action = ctx.request.action
            done = self._start(link, action)
            try:
                answer = await call_next(ctx)
            except BaseException as exc:
                done(exc)
                raise
            if isinstance(answer, dict):
                done(None)
                return answer
            return _Measured(answer, done)

        return measured

    def _start(self, link: str, action: str) -> Callable[[BaseException | str | None], None]:
        children = self._children.get((link, action))
        if children is None:  # the label lookups once per action, not per request
            children = self._children[(link, action)] = _Children(
                self.in_flight.labels(link, action),
                self.duration.labels(link, action),
                lambda outcome: self.requests.labels(link, action, outcome),
            )
        gauge = children.in_flight
        gauge.inc()
        started = time.perf_counter()
        finished = False

        def done(error: BaseException | str | None) -> None:
            nonlocal finished
            if finished:
                return
            finished = True
            gauge.dec()
            children.duration.observe(time.perf_counter() - started)
            children.count(outcome_of(error))

        return done


class _Children:
    """One action's metrics, looked up once."""

    __slots__ = ("_counters", "_make", "duration", "in_flight")

    def __init__(self, in_flight: Gauge, duration: Histogram, make: Callable[[str], Counter]):
        self.in_flight = in_flight
        self.duration = duration
        self._make = make
        self._counters: dict[str, Counter] = {}

    def count(self, outcome: str) -> None:
        counter = self._counters.get(outcome)
        if counter is None:
            if len(self._counters) >= MAX_OUTCOMES:  # codes a peer made up stay bounded
                outcome = OTHER
                counter = self._counters.get(outcome)
            if counter is None:
                counter = self._counters[outcome] = self._make(outcome)
        counter.inc()


class _Measured:
    """A stream's items, reporting its end once: the last item, a failure, or closed
    before its end (the caller left: ``cancelled``)."""

    def __init__(
        self,
        items: AsyncIterator[dict[str, Any]],
        done: Callable[[BaseException | str | None], None],
    ) -> None:
        self._items = items
        self._done = done

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> dict[str, Any]:
        try:
            return await anext(self._items)
        except StopAsyncIteration:
            self._done(None)
            raise
        except BaseException as exc:
            self._done(exc)
            raise

    async def aclose(self) -> None:
        try:
            aclose = getattr(self._items, "aclose", None)
            if aclose is not None:
                await aclose()
        finally:
            self._done(CANCELLED)
