"""The connection the proxies talk to the host through.

:class:`Channel` is the small interface every proxy needs (``call``, ``stream``,
``send_file``, ``files.take``; ``docs/api-entities.md``, "The channel"); the plugin
worker passes its :class:`~langbot_plugin.rpc.session.RPCSession`, tests may pass
anything shaped the same, and an object with the reference's ``call_action`` /
``call_action_generator`` is accepted through
:func:`~langbot_plugin.protocol.handler_calls.as_caller`. For compatibility the proxies
take it as the ``plugin_runtime_handler`` keyword, the reference SDK's name. Errors are
:class:`~langbot_plugin.rpc.errors.RPCError` subclasses carrying a stable ``code``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from langbot_plugin.protocol.callers import Caller, ItemStream
from langbot_plugin.protocol.handler_calls import HandlerCaller, as_caller

__all__ = ["Channel", "FileSource", "ItemStream", "as_caller", "take_pushed_file"]


class FileSource(Protocol):
    """Files the peer pushed to us, handed out once by key."""

    def take(self, key: str) -> bytes: ...


class Channel(Caller, Protocol):
    """What the proxies need from a connection to the host (via the runtime): the
    catalogue's :class:`~langbot_plugin.protocol.callers.Caller`, and files."""

    async def send_file(self, content: bytes, *, suffix: str = "") -> str: ...

    @property
    def files(self) -> FileSource: ...


async def take_pushed_file(channel: Any, key: str) -> bytes:
    """The bytes the peer pushed under ``key`` beside an answer (handed out once)."""
    caller = as_caller(channel)
    if isinstance(caller, HandlerCaller):
        return await caller.read_file(key)
    return caller.files.take(key)


if TYPE_CHECKING:
    from langbot_plugin.rpc.session import RPCSession

    # Checked by pyright only: an RPCSession satisfies Channel.
    def rpc_session_is_a_channel(session: RPCSession) -> Channel:
        return session
