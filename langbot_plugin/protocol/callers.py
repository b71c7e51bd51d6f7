"""What a spec calls through: the calling side's view of a connection.

An :class:`~langbot_plugin.rpc.session.RPCSession` is both a :class:`Caller` and a
:class:`ScopedCaller`; the plugin API's channel is a :class:`Caller`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any, Protocol

__all__ = ["Caller", "ItemStream", "ScopedCaller"]


class ItemStream(Protocol):
    """A streamed answer: enter it, then iterate its items."""

    async def __aenter__(self) -> AsyncIterator[dict[str, Any]]: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


class Caller(Protocol):
    """What a spec calls through: an :class:`~langbot_plugin.rpc.session.RPCSession`,
    or anything shaped like the plugin API's channel."""

    async def call(
        self, action: str, data: dict[str, Any], *, timeout: float | None
    ) -> dict[str, Any]: ...

    def stream(self, action: str, data: dict[str, Any], *, timeout: float | None) -> ItemStream: ...


class ScopedCaller(Protocol):
    """A caller that can also send an envelope ``context`` (an RPC session)."""

    async def call(
        self,
        action: str,
        data: dict[str, Any],
        *,
        context: dict[str, Any] | None = None,
        timeout: float | None,
    ) -> dict[str, Any]: ...

    def stream(
        self,
        action: str,
        data: dict[str, Any],
        *,
        context: dict[str, Any] | None = None,
        timeout: float | None,
    ) -> ItemStream: ...
