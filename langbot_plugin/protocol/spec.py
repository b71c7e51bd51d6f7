"""How an action is declared: one :class:`ActionSpec` per action, used by both sides.

A spec names the action (plus the other dialect's names), its parameter and result
models, and whether it streams. The serving side registers a handler on an
:class:`ActionTable`; the handler receives the validated parameter model and returns a
result model (or, for a stream, yields them). The calling side uses
:meth:`ActionSpec.call` / :meth:`ActionSpec.stream` and gets models back.

Parameter models accept unknown keys (newer hosts add fields), so a dialect change
never breaks validation; result models keep unknown keys too.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from pydantic import BaseModel, ConfigDict, ValidationError

from langbot_plugin.rpc.errors import InvalidParamsError, MalformedMessageError
from langbot_plugin.rpc.routes import RequestContext, Route
from langbot_plugin.rpc.session import RPCSession
from langbot_plugin.rpc.stream_call import USE_DEFAULT, UseDefault

__all__ = [
    "ActionSpec",
    "ActionTable",
    "Empty",
    "Params",
    "Result",
    "dump",
    "validation_details",
]


class Params(BaseModel):
    """Base of parameter models: unknown keys are kept, never rejected."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class Result(BaseModel):
    """Base of result models: unknown keys are kept."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class Empty(Params):
    """No parameters (or no result fields)."""


P = TypeVar("P", bound=BaseModel)
R = TypeVar("R", bound=BaseModel)


def validation_details(error: ValidationError) -> dict[str, Any]:
    """A compact, JSON-safe summary of a pydantic error for the wire."""
    return {
        "errors": [
            {"loc": ".".join(str(p) for p in item["loc"]), "msg": item["msg"], "type": item["type"]}
            for item in error.errors(include_url=False, include_input=False)[:20]
        ]
    }


def dump(value: BaseModel | dict[str, Any]) -> dict[str, Any]:
    """The wire ``data`` of a result."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    return value


@dataclass(frozen=True, slots=True)
class ActionSpec(Generic[P, R]):
    """One action of the catalogue."""

    name: str
    params: type[P]
    result: type[R]
    stream: bool = False
    aliases: tuple[str, ...] = ()
    doc: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    def parse_params(self, data: dict[str, Any]) -> P:
        try:
            return self.params.model_validate(data)
        except ValidationError as exc:
            raise InvalidParamsError(
                f"invalid parameters for {self.name}: {exc.error_count()} error(s)",
                details=validation_details(exc),
            ) from None

    def parse_result(self, data: dict[str, Any]) -> R:
        try:
            return self.result.model_validate(data)
        except ValidationError as exc:
            raise MalformedMessageError(
                f"malformed result of {self.name}", details=validation_details(exc)
            ) from None

    async def call(
        self,
        session: RPCSession,
        params: P | dict[str, Any] | None = None,
        *,
        name: str | None = None,
        context: dict[str, Any] | None = None,
        timeout: float | UseDefault | None = USE_DEFAULT,
    ) -> R:
        """Call this (unary) action on the peer; ``name`` picks a dialect alias."""
        data = await session.call(
            name or self.name, _payload(params), context=context, timeout=timeout
        )
        return self.parse_result(data)

    async def iterate(
        self,
        session: RPCSession,
        params: P | dict[str, Any] | None = None,
        *,
        name: str | None = None,
        context: dict[str, Any] | None = None,
        timeout: float | UseDefault | None = USE_DEFAULT,
    ) -> AsyncGenerator[R]:
        """Call this streaming action and yield its items as models.

        Closing the generator early (``aclose`` or leaving ``async with
        contextlib.aclosing(...)``) cancels the peer's handler.
        """
        async with session.stream(
            name or self.name, _payload(params), context=context, timeout=timeout
        ) as items:
            async for item in items:
                yield self.parse_result(item)


def _payload(params: BaseModel | dict[str, Any] | None) -> dict[str, Any]:
    if params is None:
        return {}
    if isinstance(params, BaseModel):
        return params.model_dump(mode="json", by_alias=True)
    return params


UnaryImpl = Callable[[Any, RequestContext], Awaitable[BaseModel | dict[str, Any]]]
StreamImpl = Callable[[Any, RequestContext], AsyncIterator[BaseModel | dict[str, Any]]]


class ActionTable:
    """A dispatcher built from specs: validates parameters, dumps results.

    ``table.add(spec, handler)`` registers ``handler(params, ctx)`` under every name of
    ``spec``. A name registered twice is a programming error.
    """

    def __init__(self) -> None:
        self._routes: dict[str, Route] = {}
        self._specs: dict[str, ActionSpec[Any, Any]] = {}

    def __contains__(self, name: str) -> bool:
        return name in self._routes

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self._routes)

    def resolve(self, action: str) -> Route | None:
        return self._routes.get(action)

    def add_route(self, name: str, route: Route) -> None:
        """Register an untyped route (for pass-through forwarding)."""
        if name in self._routes:
            raise ValueError(f"action {name} is registered twice")
        self._routes[name] = route

    def add(self, spec: ActionSpec[P, R], handler: UnaryImpl | StreamImpl) -> None:
        if spec.stream:
            stream_impl = cast(StreamImpl, handler)

            async def stream_route(ctx: RequestContext) -> AsyncIterator[dict[str, Any]]:
                params = spec.parse_params(ctx.data)
                async for item in stream_impl(params, ctx):
                    yield dump(item)

            route = Route(stream_route, stream=True)
        else:
            unary_impl = cast(UnaryImpl, handler)

            async def unary_route(ctx: RequestContext) -> dict[str, Any]:
                return dump(await unary_impl(spec.parse_params(ctx.data), ctx))

            route = Route(unary_route)
        for name in spec.names:
            self.add_route(name, route)
            self._specs[name] = spec

    def on(self, spec: ActionSpec[P, R]) -> Callable[[Any], Any]:
        """Decorator form of :meth:`add`."""

        def register(handler: Any) -> Any:
            self.add(spec, handler)
            return handler

        return register

    def spec_for(self, name: str) -> ActionSpec[Any, Any] | None:
        return self._specs.get(name)
