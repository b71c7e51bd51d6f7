"""Base of the plugin-level API: the channel, and how its calls travel on it.

A call made while a run is bound to the task (:mod:`~langbot_plugin.api.proxies.run_binding`)
carries that run's ``run_id`` when the run's grants govern the action, and is held to
them by the runtime and the host.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, TypeVar

from pydantic import BaseModel

from langbot_plugin.api.proxies import run_binding
from langbot_plugin.api.proxies._host_calls import HostCalls
from langbot_plugin.api.proxies.channel import Channel
from langbot_plugin.protocol.spec import ActionSpec
from langbot_plugin.rpc.errors import NotReadyError, RPCError

__all__ = ["PluginAPIBase"]

P = TypeVar("P", bound=BaseModel)
R = TypeVar("R")


class PluginAPIBase(HostCalls):
    """Holds the channel; calls go out as they are (errors are the channel's
    :class:`~langbot_plugin.rpc.errors.RPCError` subclasses, with stable codes)."""

    #: The connection to the runtime; set by the worker (possibly after construction).
    plugin_runtime_handler: Channel | None = None

    def __init__(self, plugin_runtime_handler: Channel | None = None) -> None:
        self.plugin_runtime_handler = plugin_runtime_handler

    def _channel(self) -> Channel:
        channel = self.plugin_runtime_handler
        if channel is None:
            raise NotReadyError("the plugin is not connected to a runtime yet")
        return channel

    async def _stamped(
        self, spec: ActionSpec[P, R], params: P, timeout: float | None
    ) -> tuple[Channel, dict[str, Any], float | None]:
        """The channel, the payload bound to the current run, and the wait."""
        channel = self._channel()
        payload = spec.dump_params(params)
        try:
            wait = run_binding.stamp(
                spec.name, payload, channel, spec.default_wait if timeout is None else timeout
            )
        except RPCError:
            await run_binding.report_if_ended(run_binding.current(channel))
            raise
        return channel, payload, wait

    async def _send(self, spec: ActionSpec[P, R], params: P, *, timeout: float | None = None) -> R:
        channel, payload, wait = await self._stamped(spec, params, timeout)
        return spec.parse_result(await spec.relay(channel, payload, timeout=wait))

    async def _open(
        self, spec: ActionSpec[P, R], params: P, *, timeout: float | None = None
    ) -> AsyncIterator[R]:
        channel, payload, wait = await self._stamped(spec, params, timeout)
        async with spec.relay_stream(channel, payload, timeout=wait) as items:
            async for item in items:
                yield spec.parse_result(item)
