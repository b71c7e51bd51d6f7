"""Calls the runtime has made to plugins and is still waiting on, and the stuck ones.

Every host action the runtime hands to a plugin goes through :meth:`InflightCalls.peer`,
which notes each open call and when the plugin last answered (a stream item counts). A
call unanswered for ``threshold`` seconds is *stuck*: logged once and counted
(:attr:`InflightCalls.stuck_total`); ``lbp rt status`` lists the open calls
(:func:`runtime_status`).
"""

from __future__ import annotations

import itertools
import logging
import math
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import anyio

from langbot_plugin.rpc import FileStore
from langbot_plugin.rpc.stream_call import USE_DEFAULT

if TYPE_CHECKING:
    from langbot_plugin.protocol.callers import ItemStream
    from langbot_plugin.runtime.plugins import PluginHandle, PluginPeer

__all__ = ["DEFAULT_STUCK_SEC", "InflightCall", "InflightCalls", "TrackedPeer", "runtime_status"]

logger = logging.getLogger("langbot_plugin.runtime.inflight")

#: Seconds without an answer after which a plugin call is reported (``stuck_call_sec``).
DEFAULT_STUCK_SEC = 60.0


@dataclass(eq=False, slots=True)
class InflightCall:
    """One open call to a plugin."""

    plugin: str
    action: str
    started: float
    answered: float
    stream: bool
    items: int = 0
    stuck: bool = False

    def waiting(self, now: float) -> float:
        """Seconds since the plugin last answered (or since the call started)."""
        return now - self.answered

    def describe(self, now: float) -> dict[str, Any]:
        return {
            "action": self.action,
            "age_sec": round(now - self.started, 3),
            "waiting_sec": round(self.waiting(now), 3),
            "stream": self.stream,
            "items": self.items,
            "stuck": self.stuck,
        }


class InflightCalls:
    """The open plugin calls of one runtime; :meth:`watch` reports the stuck ones."""

    def __init__(
        self, threshold: float = DEFAULT_STUCK_SEC, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if not threshold > 0:
            raise ValueError("the stuck-call threshold must be positive")
        self.threshold = threshold
        self.clock = clock
        self.stuck_total = 0
        self._calls: dict[int, InflightCall] = {}
        self._ids = itertools.count(1)

    def __len__(self) -> int:
        return len(self._calls)

    def open(self, plugin: str, action: str, *, stream: bool) -> int:
        now = self.clock()
        key = next(self._ids)
        self._calls[key] = InflightCall(plugin, action, now, now, stream)
        return key

    def answered(self, key: int) -> None:
        call = self._calls.get(key)
        if call is not None:
            call.answered = self.clock()
            call.items += 1
            call.stuck = False  # it moves again; a new silence is reported again

    def close(self, key: int) -> None:
        self._calls.pop(key, None)

    def of(self, plugin: str) -> list[InflightCall]:
        return [call for call in self._calls.values() if call.plugin == plugin]

    def peer(self, handle: PluginHandle) -> TrackedPeer:
        """``handle``'s connection, with every call noted here while it is open."""
        return TrackedPeer(handle.session, self, handle.identity)

    def check(self) -> list[InflightCall]:
        """Log and count the calls that became stuck since the last check."""
        now = self.clock()
        newly = [
            call
            for call in self._calls.values()
            if not call.stuck and call.waiting(now) >= self.threshold
        ]
        for call in newly:
            call.stuck = True
            self.stuck_total += 1
            age = round(call.waiting(now), 1)
            fields = {"plugin": call.plugin, "action": call.action, "age_sec": age}
            logger.warning(
                "plugin %s has not answered %s for %s s",
                call.plugin,
                call.action,
                age,
                extra={"lbp_fields": fields},
            )
        return newly

    async def watch(self) -> None:
        """Check a few times per threshold, for as long as the runtime runs."""
        interval = min(max(self.threshold / 4, 0.05), 5.0)
        while True:
            await anyio.sleep(interval)
            self.check()


class TrackedPeer:
    """A plugin's connection (a :class:`~.plugins.PluginPeer`) that notes its calls."""

    def __init__(self, peer: PluginPeer, calls: InflightCalls, plugin: str) -> None:
        self._peer = peer
        self._calls = calls
        self.plugin = plugin

    @property
    def closed(self) -> bool:
        return self._peer.closed

    @property
    def files(self) -> FileStore:
        return self._peer.files

    async def call(
        self,
        action: str,
        data: dict[str, Any] | None = None,
        *,
        context: dict[str, Any] | None = None,
        timeout: Any = USE_DEFAULT,
    ) -> dict[str, Any]:
        key = self._calls.open(self.plugin, action, stream=False)
        try:
            return await self._peer.call(action, data, context=context, timeout=timeout)
        finally:
            self._calls.close(key)

    def stream(
        self,
        action: str,
        data: dict[str, Any] | None = None,
        *,
        context: dict[str, Any] | None = None,
        timeout: Any = USE_DEFAULT,
    ) -> _TrackedStream:
        inner = self._peer.stream(action, data, context=context, timeout=timeout)
        return _TrackedStream(inner, self._calls, self.plugin, action)

    async def send_file(
        self, content: bytes, *, suffix: str = "", context: dict[str, Any] | None = None
    ) -> str:
        return await self._peer.send_file(content, suffix=suffix, context=context)

    def close(self) -> None:
        self._peer.close()


class _TrackedStream:
    """A streamed call that counts as open from its first item asked to its end."""

    def __init__(self, inner: ItemStream, calls: InflightCalls, plugin: str, action: str) -> None:
        self._inner = inner
        self._calls = calls
        self._plugin = plugin
        self._action = action
        self._items: AsyncIterator[dict[str, Any]] | None = None
        self._key: int | None = None

    async def __aenter__(self) -> Self:
        self._items = await self._inner.__aenter__()
        self._key = self._calls.open(self._plugin, self._action, stream=True)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._key is not None:
            self._calls.close(self._key)
            self._key = None
        await self._inner.__aexit__(exc_type, exc, tb)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> dict[str, Any]:
        assert self._items is not None, "enter the stream first (async with)"
        item = await anext(self._items)
        if self._key is not None:
            self._calls.answered(self._key)
        return item


def runtime_status(handles: Iterable[PluginHandle], calls: InflightCalls) -> dict[str, Any]:
    """What ``/status`` answers: live plugins, their open calls and ages, the counters."""
    now = calls.clock()
    plugins: list[dict[str, Any]] = []
    for handle in handles:
        open_calls = sorted(calls.of(handle.identity), key=lambda c: c.started)
        plugins.append(
            {
                "plugin": handle.identity,
                "debug": handle.debug,
                "installation": handle.binding.installation_uuid,
                "status": handle.container.status,
                "enabled": handle.container.enabled,
                "calls": [call.describe(now) for call in open_calls],
            }
        )
    return {
        "plugins": plugins,
        "inflight": len(calls),
        "stuck_total": calls.stuck_total,
        "stuck_after_sec": calls.threshold if math.isfinite(calls.threshold) else None,
    }
