"""How a session finds the code that serves an action, and the middleware around it.

A :class:`Dispatcher` maps an action name to a :class:`Route`: a coroutine for a unary
action or an async iterator for a streamed one. Handlers receive a
:class:`RequestContext` (the request and the session it arrived on).

A :data:`Middleware` is ``async (ctx, call_next) -> answer``, as in Starlette or MCP's
server middleware: it may check or note the request before ``await call_next(ctx)``,
look at the answer, or translate a failure. The answer of a unary route is its result
dict; that of a streamed route is its item iterator, not yet started (a middleware
that needs the stream's end wraps it with :func:`when_done`). :func:`compose` puts a
route behind its middleware once, when a table first resolves the action
(:class:`~langbot_plugin.protocol.spec.ActionTable`), never per request.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

from langbot_plugin.rpc.envelope import Request

if TYPE_CHECKING:
    from langbot_plugin.rpc.session import RPCSession

__all__ = [
    "Answer",
    "CallNext",
    "Dispatcher",
    "Middleware",
    "RequestContext",
    "Route",
    "RouteTable",
    "StreamHandler",
    "UnaryHandler",
    "UsesMiddleware",
    "before",
    "compose",
    "preceded_by",
    "when_done",
]


@dataclass(frozen=True, slots=True)
class RequestContext:
    """What a handler gets: the request and the session it arrived on."""

    session: RPCSession
    request: Request

    @property
    def data(self) -> dict[str, Any]:
        return self.request.data

    @property
    def context(self) -> dict[str, Any] | None:
        return self.request.context


UnaryHandler = Callable[[RequestContext], Awaitable[dict[str, Any]]]
StreamHandler = Callable[[RequestContext], AsyncIterator[dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class Route:
    """How to serve one action: a coroutine (unary) or an async iterator (stream)."""

    handler: UnaryHandler | StreamHandler
    stream: bool = False


#: What a route answers: the result (unary) or the items, not yet started (stream).
Answer = dict[str, Any] | AsyncIterator[dict[str, Any]]
CallNext = Callable[[RequestContext], Awaitable[Answer]]
Middleware = Callable[[RequestContext, CallNext], Awaitable[Answer]]


def _link(middleware: Middleware, call_next: CallNext) -> CallNext:
    async def call(ctx: RequestContext) -> Answer:
        return await middleware(ctx, call_next)

    return call


def compose(route: Route, middleware: Sequence[Middleware]) -> Route:
    """``route`` behind ``middleware``, the first one outermost (it runs first)."""
    if not middleware:
        return route
    if route.stream:
        stream = cast(StreamHandler, route.handler)

        async def start(ctx: RequestContext) -> Answer:
            return stream(ctx)

        call: CallNext = start
    else:
        call = cast(CallNext, route.handler)
    for outer in reversed(middleware):
        call = _link(outer, call)
    if not route.stream:
        return Route(cast(UnaryHandler, call))
    chain = call

    async def composed_stream(ctx: RequestContext) -> AsyncIterator[dict[str, Any]]:
        items = cast(AsyncIterator[dict[str, Any]], await chain(ctx))
        try:
            async for item in items:
                yield item
        finally:  # leaving early (the caller cancelled) closes the inner stream now
            await _aclose(items)

    return Route(composed_stream, stream=True)


async def _aclose(items: AsyncIterator[Any]) -> None:
    aclose = getattr(items, "aclose", None)
    if aclose is not None:
        await aclose()


def before(first: Callable[[RequestContext], object]) -> Middleware:
    """A middleware that runs ``first(ctx)`` before the route: a check that may raise
    (the call then fails with its error), or a note of the call. ``first`` may be a
    coroutine function (it is awaited). For a stream it runs when the stream starts,
    before its first item."""

    async def middleware(ctx: RequestContext, call_next: CallNext) -> Answer:
        result = first(ctx)
        if inspect.isawaitable(result):
            await result
        return await call_next(ctx)

    return middleware


def preceded_by(route: Route, first: Callable[[RequestContext], object]) -> Route:
    """``route`` with ``first(ctx)`` run before its handler (:func:`before`)."""
    return compose(route, (before(first),))


def when_done(
    answer: Answer,
    done: Callable[[Exception | None], None],
    each: Callable[[dict[str, Any]], None] | None = None,
) -> Answer:
    """``answer``, with ``done(None)`` called once it is complete and ``done(error)``
    when it fails: at once for a unary result, after the last item of a stream (whose
    items ``each`` sees on their way). A stream the caller leaves early calls neither."""
    if isinstance(answer, dict):
        done(None)
        return answer
    items = answer

    async def watched() -> AsyncIterator[dict[str, Any]]:
        try:
            async for item in items:
                if each is not None:
                    each(item)
                yield item
        except Exception as exc:
            done(exc)
            raise
        else:
            done(None)
        finally:
            await _aclose(items)

    return watched()


class UsesMiddleware(Protocol):
    """What takes route middleware (an ``ActionTable``, a layer above)."""

    def use(self, middleware: Middleware) -> None: ...


class Dispatcher(Protocol):
    """Looks up the route of an action name (``None``: not served here)."""

    def resolve(self, action: str) -> Route | None: ...


class RouteTable(dict[str, Route]):
    """The simplest dispatcher: a dict from action name to :class:`Route`."""

    def resolve(self, action: str) -> Route | None:
        return self.get(action)
