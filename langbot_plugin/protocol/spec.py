"""How an action is declared: one :class:`ActionSpec` per action, used by both sides.

A spec names the action (and the other dialect's names), its parameter and result
models, whether it streams, who calls whom (:class:`Direction`), how long a caller
waits, and which keys name a file pushed with ``__file_chunk`` beside the call
(modelled on MCP's ``(method, params model, handler)`` rows). A server registers
handlers on an :class:`ActionTable`; a caller uses :meth:`ActionSpec.call` /
:meth:`ActionSpec.iterate` and gets models back; a relay uses
:meth:`ActionSpec.relay` / :meth:`ActionSpec.relay_stream` (the spec's name and
timeouts, no parsing). Models accept unknown keys, so a newer host's fields never break
validation.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Generic, TypeVar, cast

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from langbot_plugin.protocol.callers import Caller, ItemStream, ScopedCaller
from langbot_plugin.rpc.errors import InternalError, InvalidParamsError, MalformedMessageError
from langbot_plugin.rpc.routes import RequestContext
from langbot_plugin.rpc.session import DEFAULT_TIMEOUT

__all__ = [
    "ActionSpec",
    "ActionTable",
    "Caller",
    "Direction",
    "Empty",
    "ItemStream",
    "Params",
    "Relayed",
    "Result",
    "ScopedCaller",
    "StreamImpl",
    "UnaryImpl",
    "dump",
    "parse_peer",
    "validation_details",
]


class Params(BaseModel):
    """Base of parameter models: unknown keys are kept, never rejected.

    A model's validator is built when it is first used (``defer_build``): a process
    that only relays an action (the runtime, for most of the catalogue) never pays
    for it."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, defer_build=True)


class Result(BaseModel):
    """Base of result models: unknown keys are kept (validators built on first use)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, defer_build=True)


class Empty(Params):
    """No parameters (or no result fields)."""


class Direction(Enum):
    """Who sends the request, and to whom. ``*_TO_HOST`` / ``HOST_TO_PLUGIN`` calls are
    relayed by the plugin runtime."""

    HOST_TO_RUNTIME = "host -> runtime"
    RUNTIME_TO_HOST = "runtime -> host"
    RUNTIME_TO_PLUGIN = "runtime -> plugin"
    PLUGIN_TO_RUNTIME = "plugin -> runtime"
    PLUGIN_TO_HOST = "plugin -> host (relayed)"
    HOST_TO_PLUGIN = "host -> plugin (relayed)"
    HOST_TO_BOX = "host -> box"


P = TypeVar("P", bound=BaseModel)
#: A result is a pydantic model, or a ``TypedDict`` where the API hands out plain dicts.
R = TypeVar("R")


def validation_details(error: ValidationError) -> dict[str, Any]:
    """A compact, JSON-safe summary of a pydantic error for the wire."""
    return {
        "errors": [
            {"loc": ".".join(str(p) for p in item["loc"]), "msg": item["msg"], "type": item["type"]}
            for item in error.errors(include_url=False, include_input=False)[:20]
        ]
    }


def parse_peer(model: type[P], data: object, action: str) -> P:
    """``data`` a peer sent for ``action`` as ``model``; a misfit is
    :class:`InvalidParamsError` (the errors in its details), never pydantic's own."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InvalidParamsError(
            f"invalid parameters for {action}: {exc.error_count()} error(s)",
            details=validation_details(exc),
        ) from None


def dump(value: BaseModel) -> dict[str, Any]:
    """The wire ``data`` of a model."""
    return value.model_dump(mode="json", by_alias=True)


class _Default:
    """Marker: "the spec's timeout"."""

    __slots__ = ()


_DEFAULT = _Default()


def _missing_keys(error: ValidationError) -> list[str]:
    return [
        str(item["loc"][0])
        for item in error.errors(include_url=False, include_input=False)
        if item["type"] == "missing" and len(item["loc"]) == 1
    ]


@dataclass(frozen=True, slots=True)
class Relayed:
    """A peer's answer a handler passes on as it came.

    For a relay's hot path (the runtime between host and plugin): the peer that
    produced the answer checked it against the same declaration on its way out, and the
    caller that receives it checks it again, so it is sent without being parsed and
    dumped a second time in between."""

    data: dict[str, Any]


# --------------------------------------------------------------------------- the spec


@dataclass(frozen=True, slots=True)
class ActionSpec(Generic[P, R]):
    """One action of the catalogue.

    ``timeout`` is the default wait of a caller in seconds (``None``: the session's
    default); a payload ``timeout`` (seconds) may raise it up to ``max_timeout``.
    ``payload_wait`` is ``(key, margin)`` for an action whose payload sets the time its
    work may take (``box_exec``'s ``timeout_sec``): a caller waits the payload's ``key``
    seconds (else the params model's default for it) plus ``margin``, and at least
    ``timeout`` when that is set.
    ``files`` names result keys that carry the key of a file the answering side pushed
    before answering; ``request_files`` names payload keys (``"context.file_key"`` for a
    nested one) that carry the key of a file the caller pushed before calling.
    ``parse`` is how the serving side reads a peer's parameters when the params model is
    a strict form (the handshake's :meth:`RuntimeConfig.from_peer`); by default the
    params model itself, which keeps unknown keys.
    """

    name: str
    params: type[P]
    result: type[R]
    stream: bool = False
    aliases: tuple[str, ...] = ()
    doc: str = ""
    direction: Direction | None = None
    timeout: float | None = None
    max_timeout: float | None = None
    payload_wait: tuple[str, float] | None = None
    files: tuple[str, ...] = ()
    request_files: tuple[str, ...] = ()
    parse: Callable[[Mapping[str, Any]], P] | None = None
    #: validates and dumps a ``TypedDict`` result (``None`` for a model; built on first use)
    _adapter: TypeAdapter[R] | None = field(init=False, repr=False, compare=False, default=None)
    _is_model: bool = field(init=False, repr=False, compare=False, default=True)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_is_model", issubclass(cast(type, self.result), BaseModel))

    def _typed_dict(self) -> TypeAdapter[R] | None:
        """The adapter of a ``TypedDict`` result, or ``None`` for a model result."""
        if self._is_model:
            return None
        if self._adapter is None:
            object.__setattr__(self, "_adapter", TypeAdapter(self.result))
        return self._adapter

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    # ------------------------------------------------------------------ validation

    def parse_params(self, data: Mapping[str, Any]) -> P:
        if self.parse is not None:
            return self.parse(data)
        return parse_peer(self.params, data, self.name)

    def _validate_result(self, data: Any) -> R:
        adapter = self._typed_dict()
        if adapter is not None:
            return adapter.validate_python(data)
        return cast(type[BaseModel], self.result).model_validate(data)  # type: ignore[return-value]

    def parse_result(self, data: Mapping[str, Any]) -> R:
        """The answer as the result type; a misfit is :class:`MalformedMessageError`."""
        try:
            return self._validate_result(data)
        except ValidationError as exc:
            missing = _missing_keys(exc)
            problem = (
                f"lacks {', '.join(repr(k) for k in missing)}"
                if missing
                else f"is malformed: {exc.error_count()} error(s)"
            )
            raise MalformedMessageError(
                f"{self.name} answer {problem}",
                details={"action": self.name, **validation_details(exc)}
                | ({"missing_key": missing[0]} if missing else {}),
            ) from None

    def dump_params(self, params: P | Mapping[str, Any] | None) -> dict[str, Any]:
        """The wire payload: the fields the caller set (defaults are the receiver's
        business; a nested model is sent whole). A mapping is validated first."""
        if params is None:
            return {}
        model = params if isinstance(params, BaseModel) else self.parse_params(params)
        # top-level fields the caller set (and unknown keys); nested models in full
        sent = model.model_fields_set.union(model.model_extra or ())
        return model.model_dump(mode="json", by_alias=True, include=sent)

    def dump_result(self, value: object, *, exclude_unset: bool = False) -> dict[str, Any]:
        """The wire ``data`` of what a handler returned, checked against the result type.

        A model of the result class (or a subclass) is dumped as it is; anything else
        (another model, a dict) is validated first, so a handler can never send what its
        spec does not declare. ``exclude_unset`` leaves out the fields nobody set."""
        if type(value) is Relayed:
            return value.data
        adapter = self._typed_dict()
        if adapter is None and isinstance(value, cast(type[BaseModel], self.result)):
            return value.model_dump(mode="json", by_alias=True, exclude_unset=exclude_unset)
        raw = (
            value.model_dump(mode="json", by_alias=True, exclude_unset=exclude_unset)
            if isinstance(value, BaseModel)
            else value
        )
        try:
            checked = self._validate_result(raw)
        except ValidationError as exc:
            raise InternalError(
                f"{self.name} handler returned a malformed result: {exc.error_count()} error(s)",
                details=validation_details(exc),
            ) from None
        if adapter is not None:
            return cast(dict[str, Any], adapter.dump_python(checked, mode="json", by_alias=True))
        return cast(BaseModel, checked).model_dump(
            mode="json", by_alias=True, exclude_unset=exclude_unset
        )

    @property
    def default_wait(self) -> float:
        """The wait of a caller that names none: the spec's, else the session default."""
        return self.timeout if self.timeout is not None else DEFAULT_TIMEOUT

    def wait(
        self, timeout: float | _Default | None = _DEFAULT, payload: Mapping[str, Any] | None = None
    ) -> float | None:
        """The caller's wait: ``timeout`` if given (``None``: no limit), else the default
        (for a ``payload_wait`` action, derived from ``payload``)."""
        if not isinstance(timeout, _Default):
            return timeout
        if self.payload_wait is None:
            return self.default_wait
        key, margin = self.payload_wait
        asked = (payload or {}).get(key)
        if isinstance(asked, bool) or not isinstance(asked, int | float) or asked <= 0:
            field_info = cast(type[BaseModel], self.params).model_fields.get(key)
            asked = field_info.default if field_info is not None else None
        if isinstance(asked, bool) or not isinstance(asked, int | float):
            asked = DEFAULT_TIMEOUT
        return max(float(asked) + margin, self.timeout or 0.0)

    def requested_wait(self, requested: object) -> float | None:
        """The wait for a payload that asks for ``requested`` seconds (capped)."""
        base = self.default_wait
        if isinstance(requested, int | float) and not isinstance(requested, bool) and requested > 0:
            cap = self.max_timeout if self.max_timeout is not None else float(requested)
            return min(float(requested), cap)
        return base

    # ------------------------------------------------------------------ calling

    async def call(
        self,
        peer: Caller | ScopedCaller,
        params: P | Mapping[str, Any] | None = None,
        *,
        name: str | None = None,
        context: dict[str, Any] | None = None,
        timeout: float | _Default | None = _DEFAULT,
    ) -> R:
        """Call this (unary) action on the peer; ``name`` picks a dialect alias."""
        data = await self.relay(
            peer, self.dump_params(params), name=name, context=context, timeout=timeout
        )
        return self.parse_result(data)

    async def iterate(
        self,
        peer: Caller | ScopedCaller,
        params: P | Mapping[str, Any] | None = None,
        *,
        name: str | None = None,
        context: dict[str, Any] | None = None,
        timeout: float | _Default | None = _DEFAULT,
    ) -> AsyncGenerator[R]:
        """Call this streaming action and yield its items as models (``timeout`` per item).

        Closing the generator early (``aclose`` or leaving ``async with
        contextlib.aclosing(...)``) cancels the peer's handler.
        """
        payload = self.dump_params(params)
        async with self.relay_stream(
            peer, payload, name=name, context=context, timeout=timeout
        ) as items:
            async for item in items:
                yield self.parse_result(item)

    async def relay(
        self,
        peer: Caller | ScopedCaller,
        data: dict[str, Any],
        *,
        name: str | None = None,
        context: dict[str, Any] | None = None,
        timeout: float | _Default | None = _DEFAULT,
    ) -> dict[str, Any]:
        """Pass ``data`` on unparsed and return the answer unparsed (for relays)."""
        limit = self.wait(timeout, data)
        if context is None:
            return await cast(Caller, peer).call(name or self.name, data, timeout=limit)
        return await cast(ScopedCaller, peer).call(
            name or self.name, data, context=context, timeout=limit
        )

    def relay_stream(
        self,
        peer: Caller | ScopedCaller,
        data: dict[str, Any],
        *,
        name: str | None = None,
        context: dict[str, Any] | None = None,
        timeout: float | _Default | None = _DEFAULT,
    ) -> ItemStream:
        """Open this streaming action with ``data`` unparsed; items come back unparsed."""
        limit = self.wait(timeout, data)
        if context is None:
            return cast(Caller, peer).stream(name or self.name, data, timeout=limit)
        return cast(ScopedCaller, peer).stream(
            name or self.name, data, context=context, timeout=limit
        )


def to_plugin(
    name: str, params: type[P], result: type[R], timeout: float | None = None, **options: Any
) -> ActionSpec[P, R]:
    """A runtime -> plugin action (a worker serves it)."""
    return ActionSpec(
        name, params, result, direction=Direction.RUNTIME_TO_PLUGIN, timeout=timeout, **options
    )


def from_host(name: str, params: type[P], result: type[R], **options: Any) -> ActionSpec[P, R]:
    """A host -> runtime action (the runtime serves it)."""
    return ActionSpec(name, params, result, direction=Direction.HOST_TO_RUNTIME, **options)


# --------------------------------------------------------------------------- serving

UnaryImpl = Callable[[Any, RequestContext], Awaitable[Any]]
StreamImpl = Callable[[Any, RequestContext], AsyncIterator[Any]]

# The table that serves specs lives beside them (it needs the spec, the spec does not).
from langbot_plugin.protocol.table import ActionTable  # noqa: E402
