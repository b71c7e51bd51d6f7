"""Where a trace test reads spans: a small OTLP/HTTP receiver and an in-process exporter.

:func:`otlp_receiver` serves ``POST /v1/traces`` on 127.0.0.1 as a collector does
(protobuf ``ExportTraceServiceRequest``, gzip or not), so the daemons under test export
with OpenTelemetry's real OTLP exporter, configured by the ``OTEL_*`` variables of
:meth:`Receiver.env`. :func:`traced_here` turns traces on in the test's own process
(the host side) with the SDK's ``InMemorySpanExporter``. Both give :class:`SpanRecord`s;
:func:`lineage` follows parent links across all of them.
"""

from __future__ import annotations

import gzip
from collections.abc import AsyncGenerator, Generator, Iterable
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from langbot_plugin.rpc import tracing
from tests.conftest import free_port

__all__ = ["Receiver", "SpanRecord", "lineage", "otlp_receiver", "traced_here"]


@dataclass(frozen=True)
class SpanRecord:
    service: str
    name: str
    kind: str  # SERVER, CLIENT, INTERNAL...
    trace_id: str
    span_id: str
    parent_id: str | None
    attributes: dict[str, Any]


class Receiver:
    """The spans received so far (:attr:`spans`) and the environment that sends them here."""

    def __init__(self, *, unavailable: bool = False) -> None:
        self.spans: list[SpanRecord] = []
        self.url = ""
        #: Answer every export 503 (retryable), as a collector that is down behind a
        #: proxy does; :attr:`refused` counts them.
        self.unavailable = unavailable
        self.refused = 0

    def env(self) -> dict[str, str]:
        """A daemon's environment for traces exported here, promptly (50 ms batches)."""
        return {
            tracing.ENV: "on",
            "OTEL_TRACES_EXPORTER": "otlp",
            "OTEL_EXPORTER_OTLP_ENDPOINT": self.url,
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_BSP_SCHEDULE_DELAY": "50",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }

    async def handle(self, request: web.Request) -> web.Response:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
            ExportTraceServiceResponse,
        )
        from opentelemetry.proto.trace.v1.trace_pb2 import Span

        body = await request.read()
        if self.unavailable:
            self.refused += 1
            return web.Response(status=503)
        if request.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        message = ExportTraceServiceRequest()
        message.ParseFromString(body)
        for resource_spans in message.resource_spans:
            service = next(
                (
                    a.value.string_value
                    for a in resource_spans.resource.attributes
                    if a.key == "service.name"
                ),
                "",
            )
            for scope in resource_spans.scope_spans:
                for span in scope.spans:
                    self.spans.append(
                        SpanRecord(
                            service=service,
                            name=span.name,
                            kind=Span.SpanKind.Name(span.kind).removeprefix("SPAN_KIND_"),
                            trace_id=span.trace_id.hex(),
                            span_id=span.span_id.hex(),
                            parent_id=span.parent_span_id.hex() or None,
                            attributes={a.key: a.value.string_value for a in span.attributes},
                        )
                    )
        reply = ExportTraceServiceResponse().SerializeToString()
        return web.Response(body=reply, content_type="application/x-protobuf")


@asynccontextmanager
async def otlp_receiver(*, unavailable: bool = False) -> AsyncGenerator[Receiver]:
    receiver = Receiver(unavailable=unavailable)
    app = web.Application()
    app.router.add_post("/v1/traces", receiver.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    receiver.url = f"http://127.0.0.1:{port}"
    try:
        yield receiver
    finally:
        await runner.cleanup()


class InProcess:
    """The test process's own spans (the host side)."""

    def __init__(self, exporter: Any, service: str) -> None:
        self._exporter = exporter
        self.service = service
        self.tracer: Any = None

    @property
    def spans(self) -> list[SpanRecord]:
        return [
            SpanRecord(
                service=self.service,
                name=s.name,
                kind=s.kind.name,
                trace_id=f"{s.context.trace_id:032x}",
                span_id=f"{s.context.span_id:016x}",
                parent_id=None if s.parent is None else f"{s.parent.span_id:016x}",
                attributes=dict(s.attributes or {}),
            )
            for s in self._exporter.get_finished_spans()
        ]


@contextmanager
def traced_here(service: str = "test-host") -> Generator[InProcess]:
    """Traces on in this process, into an ``InMemorySpanExporter``; off again after."""
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: service}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    assert tracing.active() is None
    tracing.enable(service, provider=provider)
    here = InProcess(exporter, service)
    here.tracer = provider.get_tracer("tests")
    try:
        yield here
    finally:
        tracing.disable()
        provider.shutdown()


def lineage(span: SpanRecord, spans: Iterable[SpanRecord]) -> list[tuple[str, str, str]]:
    """``(service, kind, name)`` of ``span`` and each of its ancestors, nearest first, as
    far as the parent links reach."""
    by_id = {s.span_id: s for s in spans}
    chain: list[tuple[str, str, str]] = []
    current: SpanRecord | None = span
    while current is not None:
        chain.append((current.service, current.kind, current.name))
        current = by_id.get(current.parent_id) if current.parent_id else None
    return chain
