"""Base of the plugin-level API: the channel and the helpers its methods share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langbot_plugin.api.entities.builtin.provider.message import LLMStreamEvent, Message
from langbot_plugin.api.entities.builtin.resource.tool import LLMTool
from langbot_plugin.api.proxies.channel import Channel
from langbot_plugin.rpc.errors import MalformedMessageError, NotReadyError

__all__ = [
    "DEFAULT_TIMEOUT",
    "LLM_TIMEOUT",
    "PluginAPIBase",
    "expect",
    "llm_payload",
    "stream_event",
]

#: Default wait (seconds) of most calls, as in the reference.
DEFAULT_TIMEOUT = 15.0
LLM_TIMEOUT = 120.0


def expect(answer: dict[str, Any], key: str, action: str) -> Any:
    """``answer[key]``; a missing key is a :class:`MalformedMessageError`."""
    if key not in answer:
        raise MalformedMessageError(
            f"{action} answer lacks {key!r}", details={"action": action, "missing_key": key}
        )
    return answer[key]


def stream_event(item: dict[str, Any], action: str) -> LLMStreamEvent:
    """One ``invoke_llm_stream`` item (``chunk`` and/or ``usage``) as an event."""
    picked = {key: item[key] for key in ("chunk", "usage") if key in item}
    if not picked:
        raise MalformedMessageError(
            f"{action} item has neither 'chunk' nor 'usage'", details={"action": action}
        )
    return LLMStreamEvent.model_validate(picked)


def llm_payload(
    llm_model_uuid: str,
    messages: Sequence[Message],
    funcs: Sequence[LLMTool] | None,
    extra_args: dict[str, Any] | None,
) -> dict[str, Any]:
    """The common part of the LLM actions' payloads."""
    return {
        "llm_model_uuid": llm_model_uuid,
        "messages": [m.model_dump(mode="json") for m in messages],
        "funcs": [f.model_dump(mode="json") for f in funcs or ()],
        "extra_args": dict(extra_args or {}),
    }


class PluginAPIBase:
    """Holds the channel; subclasses add the API methods."""

    #: The connection to the runtime; set by the worker (possibly after construction).
    plugin_runtime_handler: Channel | None = None

    def __init__(self, plugin_runtime_handler: Channel | None = None) -> None:
        self.plugin_runtime_handler = plugin_runtime_handler

    def _channel(self) -> Channel:
        channel = self.plugin_runtime_handler
        if channel is None:
            raise NotReadyError("the plugin is not connected to a runtime yet")
        return channel

    async def _call(
        self, action: str, data: dict[str, Any], timeout: float = DEFAULT_TIMEOUT
    ) -> dict[str, Any]:
        return await self._channel().call(action, data, timeout=timeout)
