"""Shared test helpers: captured payloads, dump equivalence, a host peer over RPC."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from langbot_plugin.rpc import RequestContext, Route, RouteTable, RPCSession
from langbot_plugin.rpc.transport_memory import memory_pair

WIRE = Path(__file__).resolve().parent.parent / "fixtures" / "wire" / "payloads.jsonl"


def captured() -> list[dict[str, Any]]:
    """Every captured record (``dir``, ``msg``, ``file``, ...)."""
    with WIRE.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def _defaultish(value: Any) -> bool:
    return value in (None, "", 0, False) or value in ([], {})


def dump_differences(
    dumped: Any, original: Any, path: str = "$", *, allow_added: bool = False
) -> list[str]:
    """Where ``dumped`` (our model's dump) is not equivalent to ``original`` (wire data).

    Equivalent: every key of the original is present with an equivalent value (nulls
    included), lists match item by item, and keys only we add hold a default value
    (any value with ``allow_added``).
    """
    if isinstance(original, dict) and isinstance(dumped, dict):
        problems: list[str] = []
        for key, value in original.items():
            if key not in dumped:
                problems.append(f"{path}.{key}: missing")
            else:
                problems += dump_differences(
                    dumped[key], value, f"{path}.{key}", allow_added=allow_added
                )
        problems += [
            f"{path}.{key}: added {value!r}"
            for key, value in dumped.items()
            if key not in original and not (allow_added or _defaultish(value))
        ]
        return problems
    if isinstance(original, list) and isinstance(dumped, list):
        if len(original) != len(dumped):
            return [f"{path}: {len(dumped)} items, {len(original)} expected"]
        return [
            problem
            for index, (ours, theirs) in enumerate(zip(dumped, original, strict=True))
            for problem in dump_differences(
                ours, theirs, f"{path}[{index}]", allow_added=allow_added
            )
        ]
    if dumped != original or isinstance(dumped, bool) != isinstance(original, bool):
        return [f"{path}: {dumped!r} != {original!r}"]
    return []


def as_json(value: Any) -> Any:
    """``value`` after a JSON round trip (what the peer would see)."""
    return json.loads(json.dumps(value))


Answer = dict[str, Any] | Callable[[dict[str, Any]], Any] | BaseException


@dataclass
class HostPeer:
    """The host end of a real RPC connection: records requests, answers from tables.

    ``answers[action]`` is a dict, a function of the request data (sync or async), or
    an exception to raise; ``streams[action]`` is the list of items to stream (an
    exception in the list is raised at that point).
    """

    answers: dict[str, Answer] = field(default_factory=dict)
    streams: dict[str, list[Any]] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    cancelled: anyio.Event = field(default_factory=anyio.Event)
    #: The host's own session (to push files back), set by :func:`connected`.
    session: RPCSession | None = None

    def actions(self) -> list[str]:
        return [action for action, _ in self.calls]

    def last(self, action: str) -> dict[str, Any]:
        """The data of the latest call of ``action``."""
        for name, data in reversed(self.calls):
            if name == action:
                return data
        raise AssertionError(f"{action} was never called; calls: {self.actions()}")

    def dispatcher(self) -> _Dispatcher:
        return _Dispatcher(self)


class _Dispatcher(RouteTable):
    def __init__(self, peer: HostPeer) -> None:
        super().__init__()
        self.peer = peer

    def resolve(self, action: str) -> Route | None:
        peer = self.peer
        if action in peer.streams:
            return Route(self._stream, stream=True)
        if action in peer.answers:
            return Route(self._unary)
        return None

    async def _unary(self, ctx: RequestContext) -> dict[str, Any]:
        self.peer.calls.append((ctx.request.action, ctx.data))
        answer = self.peer.answers[ctx.request.action]
        if isinstance(answer, BaseException):
            raise answer
        if callable(answer):
            try:
                result = answer(ctx.data)
                if hasattr(result, "__await__"):
                    result = await result
            except anyio.get_cancelled_exc_class():
                self.peer.cancelled.set()
                raise
            return result
        return answer

    async def _stream(self, ctx: RequestContext) -> AsyncIterator[dict[str, Any]]:
        self.peer.calls.append((ctx.request.action, ctx.data))
        try:
            for item in self.peer.streams[ctx.request.action]:
                if isinstance(item, BaseException):
                    raise item
                if item == "hang":
                    await anyio.sleep_forever()
                    continue
                yield item
        except anyio.get_cancelled_exc_class():
            self.peer.cancelled.set()
            raise


@asynccontextmanager
async def connected(peer: HostPeer) -> AsyncGenerator[RPCSession]:
    """A plugin-side :class:`RPCSession` connected to ``peer`` over memory transports."""
    plugin_end, host_end = memory_pair()
    host = RPCSession(host_end, peer.dispatcher(), name="host")
    peer.session = host
    plugin = RPCSession(plugin_end, name="plugin")
    async with host.running(), plugin.running():
        yield plugin
