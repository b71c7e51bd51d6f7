"""Middleware on the action table: ``(ctx, call_next)``, composed once per action."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from langbot_plugin.protocol import ActionSpec, ActionTable, Params, Result
from langbot_plugin.rpc import PermissionDeniedError, RequestContext, RouteTable, RPCSession
from langbot_plugin.rpc.routes import Answer, CallNext, Middleware, Route, before, when_done
from langbot_plugin.rpc.transport_memory import memory_pair

pytestmark = pytest.mark.anyio


class Word(Params):
    word: str = ""


class Echo(Result):
    echo: str


ECHO = ActionSpec("echo", Word, Echo)
SPELL = ActionSpec("spell", Word, Echo, stream=True)
LATE = ActionSpec("late", Word, Echo)


def tagging(tag: str, seen: list[str]) -> Middleware:
    async def middleware(ctx: RequestContext, call_next: CallNext) -> Answer:
        seen.append(f"{tag}:{ctx.request.action}")
        return await call_next(ctx)

    return middleware


class Closed(list[str]):
    """The words whose stream handler has ended, and an event set on each."""

    def __init__(self) -> None:
        super().__init__()
        self.event = anyio.Event()


def echo_table() -> tuple[ActionTable, Closed]:
    closed = Closed()
    table = ActionTable()

    @table.on(ECHO)
    async def echo(params: Word, ctx: RequestContext) -> Echo:
        if params.word == "forbidden":
            raise PermissionDeniedError("not this word")
        return Echo(echo=params.word)

    @table.on(SPELL)
    async def spell(params: Word, ctx: RequestContext) -> AsyncIterator[Echo]:
        try:
            for letter in params.word:
                yield Echo(echo=letter)
        finally:
            closed.append(params.word)
            closed.event.set()

    return table, closed


async def served(dispatcher: Any) -> Any:
    """A client session and a serving session over memory (entered by the caller)."""
    a, b = memory_pair()
    return RPCSession(a, name="client"), RPCSession(b, dispatcher, name="server")


async def test_a_route_is_composed_once_and_runs_its_middleware_in_order() -> None:
    table, _ = echo_table()
    seen: list[str] = []
    table.use(tagging("inner", seen))
    table.use(tagging("outer", seen))  # added later: runs first
    table.use(tagging("echo-only", seen), when=lambda action: action == "echo")
    first = table.resolve("echo")
    assert first is not None
    assert table.resolve("echo") is first  # composed once, not per request
    client, server = await served(table)
    async with client.running(), server.running():
        assert await ECHO.call(client, Word(word="hi")) == Echo(echo="hi")
        assert [item.echo async for item in SPELL.iterate(client, Word(word="ab"))] == ["a", "b"]
    assert seen == ["echo-only:echo", "outer:echo", "inner:echo", "outer:spell", "inner:spell"]


async def test_a_mounted_dispatcher_is_served_behind_its_own_middleware() -> None:
    inner, _ = echo_table()
    seen: list[str] = []
    front = ActionTable()

    @front.on(LATE)
    async def late(params: Word, ctx: RequestContext) -> Echo:
        return Echo(echo="front")

    front.mount(inner, tagging("gate", seen))
    front.use(tagging("all", seen))
    client, server = await served(front)
    async with client.running(), server.running():
        assert (await LATE.call(client, Word())).echo == "front"
        assert (await ECHO.call(client, Word(word="x"))).echo == "x"
        with pytest.raises(Exception, match="not served here"):
            await client.call("nowhere", {})
    # the front's own route skips the mount's middleware; the table-wide one wraps both
    assert seen == ["all:late", "all:echo", "gate:echo"]


async def test_a_check_before_a_stream_refuses_it_before_its_first_item() -> None:
    table, closed = echo_table()

    def deny(ctx: RequestContext) -> None:
        if ctx.data.get("word") == "secret":
            raise PermissionDeniedError("refused up front")

    table.use(before(deny))
    client, server = await served(table)
    async with client.running(), server.running():
        with pytest.raises(PermissionDeniedError, match="refused up front"):
            await client.stream("spell", {"word": "secret"}).collect()
    assert closed == []  # the handler never started


async def test_when_done_sees_items_end_and_failure() -> None:
    table, _ = echo_table()
    ends: list[object] = []
    items: list[dict[str, Any]] = []

    async def watch(ctx: RequestContext, call_next: CallNext) -> Answer:
        try:
            answer = await call_next(ctx)
        except PermissionDeniedError as exc:
            ends.append(exc.code)
            raise
        return when_done(answer, ends.append, items.append)

    table.use(watch)
    client, server = await served(table)
    async with client.running(), server.running():
        await ECHO.call(client, Word(word="one"))
        await client.stream("spell", {"word": "ab"}).collect()
        with pytest.raises(PermissionDeniedError):
            await ECHO.call(client, Word(word="forbidden"))
    assert ends == [None, None, "permission_denied"]
    assert items == [{"echo": "a"}, {"echo": "b"}]


async def test_leaving_a_composed_stream_early_closes_the_handler() -> None:
    table, closed = echo_table()
    table.use(tagging("t", []))
    client, server = await served(table)
    async with client.running(), server.running():
        stream = SPELL.iterate(client, Word(word="abcdefghijklmnopqrstuvwxyz" * 4))
        assert (await anext(stream)).echo == "a"
        await stream.aclose()
        with anyio.fail_after(10):
            await closed.event.wait()
    assert closed == ["abcdefghijklmnopqrstuvwxyz" * 4]


async def test_deferred_routes_are_added_on_the_first_unknown_name_only() -> None:
    table, _ = echo_table()
    calls: list[str] = []

    def add_late(t: ActionTable) -> None:
        calls.append("added")

        @t.on(LATE)
        async def late(params: Word, ctx: RequestContext) -> Echo:
            return Echo(echo="late")

    table.defer(add_late)
    assert table.resolve("echo") is not None
    assert calls == []  # known names never trigger it
    assert table.resolve("late") is not None
    assert table.resolve("missing") is None
    assert calls == ["added"]


async def test_a_route_that_changes_behind_a_mount_is_composed_again() -> None:
    async def one(ctx: RequestContext) -> dict[str, Any]:
        return {"echo": "one"}

    async def two(ctx: RequestContext) -> dict[str, Any]:
        return {"echo": "two"}

    inner = RouteTable(echo=Route(one))
    front = ActionTable()
    front.mount(inner, tagging("t", []))
    first = front.resolve("echo")
    assert front.resolve("echo") is first
    inner["echo"] = Route(two)
    second = front.resolve("echo")
    assert second is not first
    client, server = await served(front)
    async with client.running(), server.running():
        assert await client.call("echo", {}) == {"echo": "two"}


async def test_a_when_that_reads_state_is_read_again_after_recompose() -> None:
    table, _ = echo_table()
    seen: list[str] = []
    state = {"open": False}
    table.use(tagging("gate", seen), when=lambda action: not state["open"])
    gated = table.resolve("echo")
    state["open"] = True
    assert table.resolve("echo") is gated  # ``when`` is read at composition only
    table.recompose()
    opened = table.resolve("echo")
    assert opened is not gated
    client, server = await served(table)
    async with client.running(), server.running():
        assert (await ECHO.call(client, Word(word="x"))).echo == "x"
    assert seen == []  # the recomposed route no longer carries the middleware
