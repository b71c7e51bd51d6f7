"""Typed action declarations: validation, dialect aliases, streaming, result parsing."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from langbot_plugin.protocol import ActionSpec, ActionTable, Params, Result
from langbot_plugin.protocol.spec import Direction, from_host, to_plugin
from langbot_plugin.rpc import InvalidParamsError, RequestContext, RPCSession
from langbot_plugin.rpc.transport_memory import memory_pair

pytestmark = pytest.mark.anyio


class AddParams(Params):
    a: int
    b: int = 0


class AddResult(Result):
    total: int


ADD = ActionSpec("add_numbers", AddParams, AddResult, aliases=("sum_numbers",))
COUNT = ActionSpec("count_up", AddParams, AddResult, stream=True)


async def add(params: AddParams, ctx: RequestContext) -> AddResult:
    return AddResult.model_validate({"total": params.a + params.b, "dialect": ctx.request.action})


def build_table() -> ActionTable:
    table = ActionTable()
    table.add(ADD, add)

    @table.on(COUNT)
    async def count(params: AddParams, ctx: RequestContext) -> AsyncIterator[AddResult]:
        for i in range(params.a):
            yield AddResult(total=i)

    return table


async def test_typed_call_both_dialect_names() -> None:
    a, b = memory_pair()
    async with RPCSession(a).running() as client, RPCSession(b, build_table()).running():
        result = await ADD.call(
            client, AddParams.model_validate({"a": 2, "b": 3, "added_by_newer_host": True})
        )
        assert result.total == 5
        assert result.model_extra == {"dialect": "add_numbers"}
        old = await ADD.call(client, {"a": 1}, name="sum_numbers")
        assert (old.total, old.model_extra) == (1, {"dialect": "sum_numbers"})
        items = [item.total async for item in COUNT.iterate(client, {"a": 4})]
        assert items == [0, 1, 2, 3]


async def test_invalid_params_name_the_field() -> None:
    a, b = memory_pair()
    async with RPCSession(a).running() as client, RPCSession(b, build_table()).running():
        with pytest.raises(InvalidParamsError) as info:
            await client.call("add_numbers", {"a": "not a number"})
        assert info.value.details["errors"][0]["loc"] == "a"
        assert await client.call("add_numbers", {"a": 1}) == {"total": 1, "dialect": "add_numbers"}


def test_a_name_cannot_be_registered_twice() -> None:
    table = build_table()
    with pytest.raises(ValueError, match="twice"):
        table.add(ActionSpec("sum_numbers", AddParams, AddResult), add)


def test_the_direction_helpers_fix_the_direction() -> None:
    """``to_plugin`` and ``from_host`` name the direction; a caller cannot pass another one."""
    assert to_plugin("add_numbers", AddParams, AddResult).direction is Direction.RUNTIME_TO_PLUGIN
    assert from_host("add_numbers", AddParams, AddResult).direction is Direction.HOST_TO_RUNTIME
    for helper in (to_plugin, from_host):
        with pytest.raises(TypeError, match="direction"):
            helper("add_numbers", AddParams, AddResult, direction=Direction.HOST_TO_RUNTIME)
