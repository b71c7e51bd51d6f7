"""``preceded_by``: a check or a note in front of a unary or streamed route."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from langbot_plugin.rpc import PermissionDeniedError, RequestContext, Route, RouteTable, RPCSession
from langbot_plugin.rpc.routes import preceded_by
from langbot_plugin.rpc.transport_memory import memory_pair

pytestmark = pytest.mark.anyio


async def test_the_hook_runs_first_and_its_error_is_the_answer() -> None:
    seen: list[str] = []
    handled: list[str] = []

    def guard(ctx: RequestContext) -> None:
        seen.append(ctx.request.action)
        if ctx.data.get("deny"):
            raise PermissionDeniedError("not for you")

    async def unary(ctx: RequestContext) -> dict[str, Any]:
        handled.append("unary")
        return {"ok": True}

    async def stream(ctx: RequestContext) -> AsyncIterator[dict[str, Any]]:
        handled.append("stream")
        for i in range(3):
            yield {"i": i}

    routes = RouteTable(
        one=preceded_by(Route(unary), guard),
        many=preceded_by(Route(stream, stream=True), guard),
    )
    client_t, server_t = memory_pair()
    async with (
        RPCSession(client_t, name="client").running() as client,
        RPCSession(server_t, routes, name="server").running(),
    ):
        assert await client.call("one", {}) == {"ok": True}
        assert await client.stream("many", {}).collect() == [{"i": 0}, {"i": 1}, {"i": 2}]
        with pytest.raises(PermissionDeniedError, match="not for you"):
            await client.call("one", {"deny": True})
        with pytest.raises(PermissionDeniedError, match="not for you"):
            await client.stream("many", {"deny": True}).collect()
    assert seen == ["one", "many", "one", "many"]
    assert handled == ["unary", "stream"]  # a refused call never reached its handler
