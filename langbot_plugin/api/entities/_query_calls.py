"""The query APIs of the event and execute contexts before a runtime connects them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from langbot_plugin.api.entities.builtin.platform import message as platform_message
from langbot_plugin.rpc.errors import NotReadyError

__all__ = ["UnconnectedQueryCalls"]


class UnconnectedQueryCalls:
    """Each call raises :class:`NotReadyError`: handlers receive the context's proxy
    (``EventContextProxy``, ``ExecuteContextProxy``), which makes them."""

    #: Who gets the proxy, for the error's message.
    unconnected_hint: ClassVar[str]

    def _not_connected(self, method: Callable[..., object]) -> NotReadyError:
        return NotReadyError(
            f"{method.__name__}() needs a runtime connection; {self.unconnected_hint} "
            "that provides it"
        )

    async def reply(
        self, message_chain: platform_message.MessageChain, quote_origin: bool = False
    ) -> Any:
        """Reply to the message of the query."""
        raise self._not_connected(self.reply)

    async def get_bot_uuid(self) -> str:
        """The uuid of the bot that received the query."""
        raise self._not_connected(self.get_bot_uuid)

    async def set_query_var(self, key: str, value: Any) -> Any:
        """Set a variable of the current query."""
        raise self._not_connected(self.set_query_var)

    async def get_query_var(self, key: str) -> Any:
        """A variable of the current query."""
        raise self._not_connected(self.get_query_var)

    async def get_query_vars(self) -> dict[str, Any]:
        """All variables of the current query."""
        raise self._not_connected(self.get_query_vars)
