"""Calls through the reference SDK's ``Handler`` interface.

The reference's proxies call ``handler.call_action(action, data, timeout)`` and iterate
``handler.call_action_generator(...)``; plugin authors' tests build them over a fake
with those two methods, and the host library's ``Handler`` has them too.
:func:`as_caller` makes such an object a :class:`~langbot_plugin.protocol.callers.Caller`
(the action sent as the enum member when the catalogue has one; no wait of its own
leaves the handler's default), so every proxy accepts it or an RPC session.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any, cast

from langbot_plugin.protocol.callers import Caller, ItemStream
from langbot_plugin.rpc.errors import RemoteError

__all__ = ["ActionCallError", "HandlerCaller", "as_caller"]


def _error_record(data: dict[str, Any]) -> dict[str, Any]:
    """The ``{code, message, ...}`` a peer's error data carries, if any: the run API's
    ``{"error": {...}}``, a bare ``{code, message}``, or our ``error_code``."""
    nested = data.get("error")
    if isinstance(nested, dict):
        return cast(dict[str, Any], nested)
    if {"code", "message"} <= data.keys():
        return data
    if isinstance(data.get("error_code"), str):
        return {"code": data["error_code"], "details": data.get("details")}
    return {}


class ActionCallError(RemoteError):
    """The peer answered a call with an error (``message``, and its ``data``).

    The reference's class of the same name; here it is also a
    :class:`~langbot_plugin.rpc.errors.RemoteError` whose ``remote_code`` is the code
    the data names, so code written for either catches it.
    """

    def __init__(self, message: str, data: dict[str, Any] | None = None) -> None:
        payload = dict(data or {})
        record = _error_record(payload)
        code = record.get("code")
        details = record.get("details") if record else payload
        super().__init__(
            message,
            remote_code=code if isinstance(code, str) else "",
            details=cast(dict[str, Any], details) if isinstance(details, dict) else None,
            retryable=record.get("retryable") is True,
        )
        self.data: dict[str, Any] = payload

    def __str__(self) -> str:
        return self.message


class _HandlerStream:
    """``call_action_generator``'s items as an :class:`ItemStream`; leaving it closes
    the handler's generator (which cancels the peer's work)."""

    def __init__(self, handler: Any, arguments: list[Any]) -> None:
        self._handler = handler
        self._arguments = arguments
        self._items: Any = None

    async def __aenter__(self) -> AsyncIterator[dict[str, Any]]:
        items: Any = self._handler.call_action_generator(*self._arguments)
        if inspect.isawaitable(items):  # a mock returning its generator from a coroutine
            items = await items
        self._items = items
        return cast(AsyncIterator[dict[str, Any]], items)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        close = getattr(self._items, "aclose", None)
        if close is not None:
            await close()


def _action(name: str) -> Any:
    # imported here: the enum is built from the whole action catalogue, which a plugin
    # that never meets a reference Handler does not need to import
    from langbot_plugin.protocol.action_enums import PluginToRuntimeAction

    try:
        return PluginToRuntimeAction(name)
    except ValueError:
        return name


class HandlerCaller:
    """A :class:`~langbot_plugin.protocol.callers.Caller` over an object with the
    reference Handler's ``call_action`` / ``call_action_generator``."""

    def __init__(self, handler: Any) -> None:
        self.handler = handler

    def _arguments(self, action: str, data: dict[str, Any], timeout: float | None) -> list[Any]:
        arguments: list[Any] = [_action(action), data]
        if timeout is not None:
            arguments.append(timeout)
        return arguments

    async def call(
        self, action: str, data: dict[str, Any], *, timeout: float | None
    ) -> dict[str, Any]:
        answer = await self.handler.call_action(*self._arguments(action, data, timeout))
        return cast(dict[str, Any], answer)

    def stream(self, action: str, data: dict[str, Any], *, timeout: float | None) -> ItemStream:
        return _HandlerStream(self.handler, self._arguments(action, data, timeout))

    async def read_file(self, key: str) -> bytes:
        """Bytes the peer pushed under ``key`` (read once, then deleted)."""
        content = cast(bytes, await self.handler.read_local_file(key))
        await self.handler.delete_local_file(key)
        return content


def as_caller(handler: Any) -> Any:
    """``handler`` as a caller: an object with the reference's ``call_action`` or
    ``call_action_generator`` is wrapped in a :class:`HandlerCaller`; anything else (an
    RPC session) is returned as it is."""
    if isinstance(handler, HandlerCaller):
        return handler
    if hasattr(handler, "call_action") or hasattr(handler, "call_action_generator"):
        return HandlerCaller(handler)
    return cast(Caller, handler)
