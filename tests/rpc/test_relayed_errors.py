"""An error passed on by a relay reads as the reference's relay shows it.

The reference runtime answers the host with ``"ActionCallError: <the plugin's message>"``
when a plugin's component raised (``ActionCallError: ValueError: ...``); hosts and
plugins show that text. Three real sessions over memory transports: a plugin that
raises, a relay that calls it and lets the error go, and a caller.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from langbot_plugin.rpc import (
    InternalError,
    NotFoundError,
    RequestContext,
    Route,
    RouteTable,
    RPCSession,
)
from langbot_plugin.rpc.transport_memory import memory_pair
from langbot_plugin.rpc.wire_errors import RELAYED

pytestmark = pytest.mark.anyio


class Plugin(RouteTable):
    def resolve(self, action: str) -> Route | None:
        async def crash(ctx: RequestContext) -> dict[str, Any]:
            raise ValueError("bad input")

        async def missing(ctx: RequestContext) -> dict[str, Any]:
            raise NotFoundError("no such knowledge base", details={"kb": "k"})

        return Route({"crash": crash, "missing": missing}[action])


class Relay(RouteTable):
    def __init__(self, plugin: RPCSession) -> None:
        super().__init__()
        self.plugin = plugin

    def resolve(self, action: str) -> Route | None:
        async def relay(ctx: RequestContext) -> dict[str, Any]:
            return await self.plugin.call(ctx.request.action, ctx.data, timeout=10)

        return Route(relay)


@asynccontextmanager
async def chain() -> AsyncGenerator[RPCSession]:
    plugin_end, relay_down = memory_pair()
    relay_up, host_end = memory_pair()
    plugin = RPCSession(plugin_end, Plugin(), name="plugin")
    to_plugin = RPCSession(relay_down, name="relay-down")
    relay = RPCSession(relay_up, Relay(to_plugin), name="relay-up")
    host = RPCSession(host_end, name="host")
    async with plugin.running(), to_plugin.running(), relay.running(), host.running():
        yield host


async def test_a_plugins_exception_reaches_the_caller_as_the_reference_shows_it() -> None:
    async with chain() as host:
        with pytest.raises(InternalError) as crashed:
            await host.call("crash", {}, timeout=10)
        with pytest.raises(NotFoundError) as missing:
            await host.call("missing", {}, timeout=10)
    # the wire text a reference host shows (and our host library hands out)
    assert crashed.value.peer_message == f"{RELAYED}: ValueError: bad input"
    assert missing.value.peer_message == f"{RELAYED}: NotFoundError: no such knowledge base"
    # our side keeps the class, the code, the details and the plain text
    assert (crashed.value.code, crashed.value.message) == (
        "internal_error",
        "ValueError: bad input",
    )
    assert (missing.value.message, missing.value.details) == (
        "no such knowledge base",
        {"kb": "k"},
    )


async def test_the_host_librarys_handler_shows_the_relayed_text() -> None:
    from langbot_plugin.entities.io.errors import ActionCallError
    from langbot_plugin.runtime.io.handler import _call_errors  # pyright: ignore[reportPrivateUsage]

    async with chain() as host:
        with pytest.raises(ActionCallError) as caught, _call_errors("crash"):
            await host.call("crash", {}, timeout=10)
    assert str(caught.value) == "ActionCallError: ValueError: bad input"
