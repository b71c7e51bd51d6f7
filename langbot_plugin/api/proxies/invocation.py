"""The invocation a plugin's code is running in, bound task-locally (0.7 names).

While a runner runs (and, in a shared runtime, while any component method serves one
installation), the worker binds an :class:`Invocation`: the channel it belongs to, the
run's API, the installation's config snapshot and its binding. Code reads it with
:func:`current_config`, :func:`current_binding` and :func:`current_api`; it is a
:class:`~contextvars.ContextVar`, so concurrent invocations never see each other's, and
a task started outside an invocation sees none. Work that escapes its invocation (a
task still running after the run ended) gets :class:`RuntimeError` instead of the ended
invocation's authority.

:func:`run_scoped` makes a plugin-level API method follow the current run: called
inside a run bound to the same channel, it is the run API's method of the same name
(held to the run's grants); outside, it is the plugin-level call.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncIterator, Callable, Generator, Mapping
from contextlib import aclosing, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar, cast

from langbot_plugin.api.proxies import run_binding

__all__ = [
    "Invocation",
    "bind_invocation",
    "current_api",
    "current_binding",
    "current_config",
    "current_invocation",
    "freeze_config",
    "invocation_capability",
    "run_scoped",
    "thaw_config",
]

F = TypeVar("F", bound=Callable[..., Any])


def freeze_config(value: Any) -> Any:
    """An immutable deep copy of a config value (mappings, sequences and sets)."""
    if isinstance(value, Mapping):
        items = cast(Mapping[Any, Any], value).items()
        return MappingProxyType({str(k): freeze_config(v) for k, v in items})
    if isinstance(value, list | tuple):
        return tuple(freeze_config(v) for v in cast(list[Any], value))
    if isinstance(value, set | frozenset):
        return frozenset(freeze_config(v) for v in cast(set[Any], value))
    return value


def thaw_config(value: Any) -> Any:
    """A JSON-shaped mutable copy of a frozen config value."""
    if isinstance(value, Mapping):
        items = cast(Mapping[Any, Any], value).items()
        return {str(k): thaw_config(v) for k, v in items}
    if isinstance(value, tuple | frozenset):
        return [thaw_config(v) for v in cast(tuple[Any, ...], value)]
    return value


@dataclass
class Invocation:
    """One bound invocation; ``active`` turns false when it ends."""

    handler: Any
    api: Any = None
    config: Mapping[str, Any] | None = None
    binding: Any = None
    active: bool = True

    def require_active(self) -> None:
        """:class:`RuntimeError` once the invocation has ended."""
        if not self.active:
            raise RuntimeError("this plugin invocation has ended")


_current: ContextVar[Invocation | None] = ContextVar("langbot_plugin_invocation", default=None)


@contextmanager
def bind_invocation(
    handler: Any,
    api: Any = None,
    *,
    config: Mapping[str, Any] | None = None,
    binding: Any = None,
) -> Generator[Invocation]:
    """Bind an invocation of ``handler`` (the plugin's channel) for the ``with`` block."""
    invocation = Invocation(
        handler, api, config=None if config is None else freeze_config(config), binding=binding
    )
    token = _current.set(invocation)
    try:
        yield invocation
    finally:
        invocation.active = False
        _current.reset(token)


def current_invocation(handler: Any = None) -> Invocation | None:
    """The bound invocation (of ``handler``, when given); :class:`RuntimeError` when it
    has ended."""
    invocation = _current.get()
    if invocation is None or (handler is not None and invocation.handler is not handler):
        return None
    invocation.require_active()
    return invocation


#: The same lookup, under the name the 0.7 SDK uses at outbound boundaries.
invocation_capability = current_invocation


def current_api(handler: Any) -> Any:
    """The run API of the invocation bound to ``handler``, if any."""
    invocation = current_invocation(handler)
    return None if invocation is None else invocation.api


def current_config(handler: Any = None) -> Mapping[str, Any] | None:
    """The installation config of the bound invocation (read-only), if any."""
    invocation = current_invocation(handler)
    return None if invocation is None else invocation.config


def current_binding(handler: Any = None) -> Any:
    """The installation binding of the bound invocation, if any."""
    invocation = current_invocation(handler)
    return None if invocation is None else invocation.binding


#: Arguments plugin-level methods take (``call_tool``'s session and query) and the run
#: API's do not: the run supplies them.
_PLUGIN_ONLY_ARGUMENTS = ("session", "query_id")


def run_scoped(method: F) -> F:
    """Make a plugin-level API method use the current run's API when one is bound to
    the same channel (see the module docstring)."""
    signature = inspect.signature(method)
    name = method.__name__

    def target(instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        handler = getattr(instance, "plugin_runtime_handler", None)
        arguments = signature.bind(instance, *args, **kwargs).arguments
        arguments.pop(next(iter(signature.parameters)))
        # work a run left behind: refused (and audited) once that run has ended
        run_binding.refuse_if_ended(handler, name, arguments)
        api = current_api(handler)
        if api is None:
            return None
        for dropped in _PLUGIN_ONLY_ARGUMENTS:
            arguments.pop(dropped, None)
        return getattr(api, name)(**arguments)

    async def scoped_or_refused(
        instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        try:
            return target(instance, args, kwargs)
        except run_binding.RunEndedError:
            handler = getattr(instance, "plugin_runtime_handler", None)
            await run_binding.report_if_ended(run_binding.current(handler))
            raise

    if inspect.isasyncgenfunction(method):

        @functools.wraps(method)
        async def stream(self: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            scoped = await scoped_or_refused(self, args, kwargs)
            source = scoped if scoped is not None else method(self, *args, **kwargs)
            async with aclosing(source) as items:
                async for item in items:
                    yield item

        return cast(F, stream)

    @functools.wraps(method)
    async def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        scoped = await scoped_or_refused(self, args, kwargs)
        if scoped is not None:
            return await scoped
        return await method(self, *args, **kwargs)

    return cast(F, call)
