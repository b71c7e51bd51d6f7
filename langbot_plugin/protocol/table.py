"""The serving side of the catalogue: an :class:`ActionTable` of specs and handlers,
with middleware composed once per action.

``table.add(spec, handler)`` registers ``handler(params, ctx)`` under every name of the
spec, validating the parameters and checking the result; ``table.use(middleware)`` wraps
every route (``when`` limits it); ``table.mount(dispatcher, *middleware)`` serves the
names the table lacks from another dispatcher behind its own middleware;
``table.defer(add)`` registers more routes on the first unknown name. A route is
composed with its middleware when first resolved and kept (a request costs a dictionary
lookup); :meth:`ActionTable.recompose` after the state a ``when`` reads has changed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from langbot_plugin.rpc.routes import Dispatcher, Middleware, RequestContext, Route, compose

if TYPE_CHECKING:
    from langbot_plugin.protocol.spec import ActionSpec, P, R, Relayed, StreamImpl, UnaryImpl

__all__ = ["ActionTable", "Applies"]

#: Which actions a middleware applies to (``None``: all of them).
Applies = Callable[[str], bool] | None


@dataclass(frozen=True, slots=True)
class _Layer:
    middleware: Middleware
    when: Applies

    def applies(self, action: str) -> bool:
        return self.when is None or self.when(action)


@dataclass(frozen=True, slots=True)
class _Mount:
    dispatcher: Dispatcher
    layers: tuple[_Layer, ...]


class ActionTable:
    """A dispatcher built from specs: validates parameters, checks results, composes
    middleware once (see the module doc).

    A name registered twice is a programming error. ``sparse=True`` sends only the
    result fields a handler set (a peer that must answer exactly like another one).
    """

    def __init__(self, *, sparse: bool = False) -> None:
        self.sparse = sparse
        self._routes: dict[str, Route] = {}
        self._specs: dict[str, ActionSpec[Any, Any]] = {}
        self._layers: list[_Layer] = []
        self._mounts: list[_Mount] = []
        self._deferred: list[Callable[[ActionTable], None]] = []
        #: action -> (the route found, the same behind its middleware)
        self._composed: dict[str, tuple[Route, Route]] = {}

    def __contains__(self, name: str) -> bool:
        return name in self._routes

    @property
    def names(self) -> frozenset[str]:
        """The names this table registered itself (not those of mounted dispatchers)."""
        return frozenset(self._routes)

    # ------------------------------------------------------------------ middleware

    def use(self, middleware: Middleware, *, when: Applies = None) -> None:
        """Put ``middleware`` around every route (of ``when``'s actions); one added later
        wraps those added before (it runs first)."""
        self._layers.insert(0, _Layer(middleware, when))
        self._composed.clear()

    def mount(self, dispatcher: Dispatcher, *middleware: Middleware, when: Applies = None) -> None:
        """Serve the names this table lacks from ``dispatcher`` (mounts are asked in
        order), each route behind ``middleware`` (of ``when``'s actions), inside the
        table's own."""
        self._mounts.append(_Mount(dispatcher, tuple(_Layer(m, when) for m in middleware)))
        self._composed.clear()

    def defer(self, add: Callable[[ActionTable], None]) -> None:
        """Call ``add(self)`` once, on the first request for a name not registered yet."""
        self._deferred.append(add)

    # ------------------------------------------------------------------ resolving

    def _find(self, action: str) -> tuple[Route, tuple[_Layer, ...]] | None:
        route = self._routes.get(action)
        if route is None and self._deferred:
            pending, self._deferred = self._deferred, []
            for add in pending:
                add(self)
            route = self._routes.get(action)
        if route is not None:
            return route, ()
        for mount in self._mounts:
            found = mount.dispatcher.resolve(action)
            if found is not None:
                return found, mount.layers
        return None

    def recompose(self) -> None:
        """Compose every route again on its next request (a ``when`` that reads state
        has changed its answer)."""
        self._composed.clear()

    def resolve(self, action: str) -> Route | None:
        cached = self._composed.get(action)
        if cached is not None and cached[0] is self._routes.get(action):
            return cached[1]  # the hot path: one route of this table, composed before
        found = self._find(action)
        if found is None:
            return None
        route, inner = found
        if cached is not None and cached[0] is route:
            return cached[1]
        layers = [*self._layers, *inner]
        composed = compose(route, [layer.middleware for layer in layers if layer.applies(action)])
        self._composed[action] = (route, composed)
        return composed

    # ------------------------------------------------------------------ registering

    def add_route(self, spec: ActionSpec[Any, Any], route: Route) -> None:
        """Register a route that serves ``spec`` without typed handling (a relay)."""
        for name in spec.names:
            if name in self._routes:
                raise ValueError(f"action {name} is registered twice")
            self._routes[name] = route
            self._specs[name] = spec

    def add(
        self,
        spec: ActionSpec[P, R],
        handler: Callable[[P, RequestContext], Awaitable[R | Relayed]]
        | Callable[[P, RequestContext], AsyncIterator[R | Relayed]],
    ) -> None:
        """Serve ``spec`` with ``handler(params, ctx)``: the parameters validated, what it
        returns (or yields) checked against the spec's result."""
        sparse = self.sparse
        if spec.stream:
            stream_impl = cast("StreamImpl", handler)

            async def stream_route(ctx: RequestContext) -> AsyncIterator[dict[str, Any]]:
                items = stream_impl(spec.parse_params(ctx.data), ctx)
                try:
                    async for item in items:
                        yield spec.dump_result(item, exclude_unset=sparse)
                finally:  # leaving early (the caller cancelled) closes the handler now
                    aclose = getattr(items, "aclose", None)
                    if aclose is not None:
                        await aclose()

            route = Route(stream_route, stream=True)
        else:
            unary_impl = cast("UnaryImpl", handler)

            async def unary_route(ctx: RequestContext) -> dict[str, Any]:
                result = await unary_impl(spec.parse_params(ctx.data), ctx)
                return spec.dump_result(result, exclude_unset=sparse)

            route = Route(unary_route)
        self.add_route(spec, route)

    def on(self, spec: ActionSpec[P, R]) -> Callable[[Any], Any]:
        """Decorator form of :meth:`add`."""

        def register(handler: Any) -> Any:
            self.add(spec, handler)
            return handler

        return register
