"""Traces of the action RPC with OpenTelemetry, when the ``otel`` extra is installed and
turned on; nothing is imported and nothing is paid otherwise.

:func:`enable` turns traces on once (``--traces`` or ``LBP_TRACES=on``); until then
:func:`active` is ``None``. Once on, every served table carries
:meth:`Tracing.middleware` (a ``SERVER`` span per request) and every unary call but the
reserved ``__`` actions is a ``CLIENT`` span (:meth:`Tracing.client`). The context
crosses each link as W3C ``traceparent``/``tracestate`` keys at the frame's top level,
where the reference's and the released host's parsers ignore them. The exporter is
configured by OpenTelemetry's own ``OTEL_*`` variables (docs/operations.md);
:func:`child_env` passes them to child processes.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from collections.abc import AsyncIterator, Callable, Generator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Self

from langbot_plugin.rpc.routes import Answer, CallNext, Middleware, RequestContext, UsesMiddleware

if TYPE_CHECKING:  # the extra is imported by enable() only
    from opentelemetry.context import Context
    from opentelemetry.trace import Span, Tracer

__all__ = [
    "ENV",
    "EXIT_FLUSH_SECONDS",
    "Tracing",
    "TracingUnavailableError",
    "active",
    "child_env",
    "disable",
    "enable",
    "from_env",
    "trace_table",
    "wanted",
]

#: The variable that turns traces on in a process (``on``/``1``/``true``), as
#: ``--traces`` does; :func:`child_env` sets it for children.
ENV = "LBP_TRACES"
_ON = frozenset({"1", "on", "true", "yes"})
_EXPORTERS = ("otlp", "console", "none")
#: How long a process that is ending waits for its last spans to reach the collector.
EXIT_FLUSH_SECONDS = 1.0

_active: Tracing | None = None


class TracingUnavailableError(RuntimeError):
    """Traces were asked for but cannot be had (the extra is missing, an unknown
    exporter); the message says what to install or set."""


def active() -> Tracing | None:
    """The process's tracing once :func:`enable` succeeded, else ``None``."""
    return _active


def trace_table(table: UsesMiddleware, link: str) -> None:
    """Put the span middleware on ``table`` (outermost so far) while traces are on; a
    table built while they are off is left as it is."""
    if _active is not None:
        table.use(_active.middleware(link))


def wanted(flag: bool = False, environ: Mapping[str, str] | None = None) -> bool:
    """Whether traces are asked for: ``flag`` (``--traces``) or ``$LBP_TRACES``, and
    not ``OTEL_SDK_DISABLED=true``."""
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return flag or env.get(ENV, "").strip().lower() in _ON


def enable(service_name: str, *, provider: Any = None) -> Tracing:
    """Turn traces on for this process (once; later calls return the same), exporting
    as OpenTelemetry's environment says; ``OTEL_SERVICE_NAME`` wins over
    ``service_name``. :class:`TracingUnavailableError` when it cannot.

    ``provider``: an SDK ``TracerProvider`` of the caller's (a test's in-memory
    exporter) to trace with instead; it is not made the process's global one."""
    global _active
    if _active is not None:
        return _active
    if provider is not None:
        _active = Tracing(provider.get_tracer("langbot_plugin.rpc"))
        return _active
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
    except ImportError as exc:
        raise TracingUnavailableError(
            f"traces need OpenTelemetry ({exc.name} is missing): pip install 'langbot-plugin[otel]'"
        ) from None
    name = os.environ.get("OTEL_SERVICE_NAME", "").strip() or service_name
    processor, exporter = _processor()
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: name}))
    if processor is not None:
        provider.add_span_processor(processor)
        # after the provider's own exit handler, so it runs first (atexit is LIFO)
        atexit.register(_flush_at_exit, processor, exporter)
    trace.set_tracer_provider(provider)
    _active = Tracing(provider.get_tracer("langbot_plugin.rpc"))
    return _active


def disable() -> None:
    """Stop tracing in this process (what a test that enabled it undoes); tables built
    while it was on keep their middleware."""
    global _active
    _active = None


def from_env(service_name: str) -> Tracing | None:
    """:func:`enable` if ``$LBP_TRACES`` asks for it; a process that cannot (the extra
    missing where a parent traces) says so on stderr once and runs untraced."""
    if not wanted():
        return None
    try:
        return enable(service_name)
    except TracingUnavailableError as exc:
        sys.stderr.write(f"traces off: {exc}\n")
        return None


def child_env(service_name: str | None = None) -> dict[str, str]:
    """What a child process needs to trace as this one does: ``LBP_TRACES`` and the
    ``OTEL_*`` variables (``OTEL_SERVICE_NAME`` replaced by ``service_name`` when given);
    empty while traces are off."""
    if _active is None:
        return {}
    env = {k: v for k, v in os.environ.items() if k.startswith("OTEL_")}
    if service_name is not None:
        env["OTEL_SERVICE_NAME"] = service_name
    env[ENV] = "on"
    return env


def _processor() -> tuple[Any, Any]:
    """The span processor and its exporter, as ``OTEL_TRACES_EXPORTER`` says (``None``
    for both: ``none``)."""
    choice = os.environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() or "otlp"
    choice = choice.split(",")[0].strip()
    if choice not in _EXPORTERS:
        raise TracingUnavailableError(
            f"OTEL_TRACES_EXPORTER={choice!r} is not supported (choose {', '.join(_EXPORTERS)})"
        )
    if choice == "none":
        return None, None
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    if choice == "console":  # stderr: a worker's stdout is its link to the runtime
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        exporter = _Ending(ConsoleSpanExporter(out=sys.stderr))
    else:
        exporter = _Ending(_otlp_exporter())
    ending: Any = exporter  # a SpanExporter by its methods (the SDK is not imported here)
    return BatchSpanProcessor(ending), exporter


class _Ending:
    """An exporter that is shut down once (the exit flush, then the provider's own exit
    handler, each shut it down; the OTLP exporter warns on the second)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._ended = False

    def export(self, spans: Any) -> Any:
        return self._inner.export(spans)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return bool(self._inner.force_flush(timeout_millis))

    def shutdown(self) -> None:
        if not self._ended:
            self._ended = True
            self._inner.shutdown()


def _flush_at_exit(processor: Any, exporter: _Ending) -> None:
    """Send what is left for at most :data:`EXIT_FLUSH_SECONDS`, then stop the exporter,
    which ends its retries: a process never waits out the exporter's own retry budget
    (10 s by default) for a collector that is not there. (The SDK's flush ignores its
    timeout, hence the thread.)"""
    flushing = threading.Thread(target=processor.force_flush, name="lbp-trace-flush", daemon=True)
    flushing.start()
    flushing.join(EXIT_FLUSH_SECONDS)
    exporter.shutdown()  # a retry waiting for its turn gives up at once
    flushing.join(EXIT_FLUSH_SECONDS)


def _otlp_exporter() -> Any:
    protocol = (
        os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    ).strip()
    if protocol != "http/protobuf":
        raise TracingUnavailableError(
            f"OTLP protocol {protocol!r} is not supported: http/protobuf only "
            "(a collector's port 4318)"
        )
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()
    except ImportError as exc:
        raise TracingUnavailableError(
            f"the OTLP exporter is not installed ({exc.name}): "
            "pip install 'langbot-plugin[otel]', or set OTEL_TRACES_EXPORTER=console"
        ) from None


class Tracing:
    """Spans of the RPC layer (see the module doc); made by :func:`enable`."""

    def __init__(self, tracer: Tracer) -> None:
        from opentelemetry import context, trace
        from opentelemetry.trace import SpanKind, Status, StatusCode
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        self._tracer = tracer
        self._propagator = TraceContextTextMapPropagator()
        #: make a context current (a token), and restore the one before
        self.attach = context.attach
        self.detach = context.detach
        self._in_context = trace.set_span_in_context
        self._current_span = trace.get_current_span
        self._server = SpanKind.SERVER
        self._client = SpanKind.CLIENT
        self._status = Status
        self._error_code = StatusCode.ERROR

    def ids(self) -> dict[str, str]:
        """``otel_trace_id`` and ``otel_span_id`` of the current span (hex, as trace
        backends show them); empty outside a span. JSON log lines carry them."""
        current = self._current_span().get_span_context()
        if not current.is_valid:
            return {}
        return {
            "otel_trace_id": f"{current.trace_id:032x}",
            "otel_span_id": f"{current.span_id:016x}",
        }

    def carrier(self) -> dict[str, str] | None:
        """The current span's context in frame keys (``None`` without a span)."""
        carrier: dict[str, str] = {}
        self._propagator.inject(carrier)
        return carrier or None

    @contextmanager
    def client(self, action: str) -> Generator[dict[str, str]]:
        """A ``CLIENT`` span for a call of ``action``; yields the keys its request carries."""
        span = self._tracer.start_span(action, kind=self._client, attributes=_attributes(action))
        carrier: dict[str, str] = {}
        self._propagator.inject(carrier, context=self._in_context(span))
        try:
            yield carrier
        except BaseException as exc:
            self.failed(span, exc)
            raise
        finally:
            span.end()

    def middleware(self, link: str) -> Middleware:
        """A ``SERVER`` span around each request of a table (``link``: an attribute)."""

        async def traced(ctx: RequestContext, call_next: CallNext) -> Answer:
            request = ctx.request
            parent = None if request.trace is None else self._propagator.extract(request.trace)
            span = self._tracer.start_span(
                request.action,
                context=parent,
                kind=self._server,
                attributes={**_attributes(request.action), "lbp.link": link},
            )
            current = self._in_context(span)
            token = self.attach(current)
            try:
                answer = await call_next(ctx)
            except BaseException as exc:
                self.failed(span, exc)
                span.end()
                raise
            finally:
                self.detach(token)
            if isinstance(answer, dict):
                span.end()
                return answer
            return _TracedItems(answer, self, span, current)

        return traced

    def failed(self, span: Span, error: BaseException) -> None:
        """Mark ``span`` failed with the stable code ``error`` is answered with."""
        from langbot_plugin.rpc.metrics import outcome_of

        code = outcome_of(error)
        span.set_attribute("lbp.error_code", code)
        span.set_status(self._status(self._error_code, code))


def _attributes(action: str) -> dict[str, str]:
    return {"rpc.system": "lbp", "rpc.method": action}


class _TracedItems:
    """A stream's items, made with its span current; the span ends with the stream."""

    def __init__(
        self, items: AsyncIterator[dict[str, Any]], tracing: Tracing, span: Span, current: Context
    ) -> None:
        self._items = items
        self._tracing = tracing
        self._span = span
        self._current = current
        self._ended = False

    def __aiter__(self) -> Self:
        return self

    def _end(self, error: BaseException | None = None) -> None:
        if self._ended:
            return
        self._ended = True
        if error is not None:
            self._tracing.failed(self._span, error)
        self._span.end()

    async def __anext__(self) -> dict[str, Any]:
        token = self._tracing.attach(self._current)
        try:
            return await anext(self._items)
        except StopAsyncIteration:
            self._end()
            raise
        except BaseException as exc:
            self._end(exc)
            raise
        finally:
            self._tracing.detach(token)

    async def aclose(self) -> None:
        try:
            aclose: Callable[[], Any] | None = getattr(self._items, "aclose", None)
            if aclose is not None:
                await aclose()
        finally:
            self._end()
