"""How a session finds the code that serves an action.

A :class:`Dispatcher` maps an action name to a :class:`Route`: a coroutine for a unary
action or an async iterator for a streamed one. Handlers receive a
:class:`RequestContext` (the request and the session it arrived on).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

from langbot_plugin.rpc.envelope import Request

if TYPE_CHECKING:
    from langbot_plugin.rpc.session import RPCSession

__all__ = [
    "Dispatcher",
    "RequestContext",
    "Route",
    "RouteTable",
    "StreamHandler",
    "UnaryHandler",
    "preceded_by",
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


def preceded_by(route: Route, first: Callable[[RequestContext], object]) -> Route:
    """``route`` with ``first(ctx)`` run before its handler: a check that may raise (the
    call then fails with its error), or a note of the call. ``first`` may be a coroutine
    function (it is awaited). A stream runs ``first`` when it is started, before its
    first item."""
    if route.stream:
        stream = cast(StreamHandler, route.handler)

        async def preceded_stream(ctx: RequestContext) -> AsyncIterator[dict[str, Any]]:
            await _run_first(first, ctx)
            async for item in stream(ctx):
                yield item

        return Route(preceded_stream, stream=True)
    unary = cast(UnaryHandler, route.handler)

    async def preceded(ctx: RequestContext) -> dict[str, Any]:
        await _run_first(first, ctx)
        return await unary(ctx)

    return Route(preceded)


async def _run_first(first: Callable[[RequestContext], object], ctx: RequestContext) -> None:
    result = first(ctx)
    if inspect.isawaitable(result):
        await result


class Dispatcher(Protocol):
    """Looks up the route of an action name (``None``: not served here)."""

    def resolve(self, action: str) -> Route | None: ...


class RouteTable(dict[str, Route]):
    """The simplest dispatcher: a dict from action name to :class:`Route`."""

    def resolve(self, action: str) -> Route | None:
        return self.get(action)
