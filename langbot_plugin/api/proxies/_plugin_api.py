"""Base of the plugin-level API: the channel, and how its calls travel on it.

A call made while a run is bound to the task (:mod:`~langbot_plugin.api.proxies.run_binding`)
carries that run's ``run_id`` when the run's grants govern the action, and is held to
them by the runtime and the host.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from langbot_plugin.api.proxies import run_binding
from langbot_plugin.api.proxies._host_calls import HostCalls
from langbot_plugin.api.proxies.channel import Channel, as_caller
from langbot_plugin.protocol.handler_calls import HandlerCaller
from langbot_plugin.protocol.spec import ActionSpec
from langbot_plugin.rpc.errors import MalformedMessageError, NotReadyError, RPCError

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
        if timeout is None and not isinstance(as_caller(channel), HandlerCaller):
            # (a reference-style handler keeps its own default wait for the calls the
            # reference makes without one)
            timeout = spec.default_wait
        try:
            wait = run_binding.stamp(spec.name, payload, channel, timeout)
        except RPCError:
            await run_binding.report_if_ended(run_binding.current(channel))
            raise
        return channel, payload, wait

    async def _send(self, spec: ActionSpec[P, R], params: P, *, timeout: float | None = None) -> R:
        return spec.parse_result(await self._send_raw(spec, params, timeout=timeout))

    async def _send_raw(
        self, spec: ActionSpec[P, R], params: P, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """The answer as the peer sent it (for the calls whose answer the reference
        handed out unparsed)."""
        channel, payload, wait = await self._stamped(spec, params, timeout)
        return await spec.relay(as_caller(channel), payload, timeout=wait)

    async def _listing(self, spec: ActionSpec[P, R], params: P, key: str) -> list[Any]:
        """The list under ``key`` of the answer, its items as the peer sent them: a host
        whose items are a little off their declared shape is passed through, as the
        reference does; an answer without the list is malformed."""
        answer = await self._send_raw(spec, params)
        items = answer.get(key)
        if not isinstance(items, list):
            spec.parse_result(answer)  # raises MalformedMessageError naming the problem
            raise MalformedMessageError(f"{spec.name} answer lacks {key!r}")
        return cast(list[Any], items)

    async def _send_waiting(self, spec: ActionSpec[P, R], params: P) -> R:
        """:meth:`_send` with the spec's wait named (what the reference's calls with a
        wait of their own do; the others leave a reference-style handler its default)."""
        return await self._send(spec, params, timeout=spec.default_wait)

    async def _open(
        self, spec: ActionSpec[P, R], params: P, *, timeout: float | None = None
    ) -> AsyncGenerator[R]:
        channel, payload, wait = await self._stamped(spec, params, timeout)
        async with spec.relay_stream(as_caller(channel), payload, timeout=wait) as items:
            async for item in items:
                yield spec.parse_result(item)
