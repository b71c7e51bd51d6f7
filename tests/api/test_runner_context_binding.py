"""The 0.7 bound methods of the run context, over a real RPC peer playing the host.

While a runner component has activated the context, ``ctx.state_get(...)`` and the
others are the run API's calls; outside a run they refuse with ``not_ready``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from langbot_plugin.api.entities.builtin.platform import events as platform_events
from langbot_plugin.api.entities.builtin.platform.message import At, MessageChain, Plain
from langbot_plugin.api.entities.builtin.runner import (
    BoxBinding,
    BoxFile,
    RunnerContext,
    RunnerResult,
    RunnerResultType,
)
from langbot_plugin.api.proxies.agent_run import AgentRunAPIProxy
from langbot_plugin.rpc.errors import NotReadyError, PermissionDeniedError
from tests.api.helpers import HostPeer, connected
from tests.api.runs import ALL_APIS, run_context
from tests.api.test_agent_run_calls import CALLS, TIMED, Call

pytestmark = pytest.mark.anyio

#: The run-API calls the context passes through under the same name.
PASS_THROUGH = [row for row in CALLS if hasattr(RunnerContext, row[0])]


class _Sink:
    def __init__(self) -> None:
        self.results: list[RunnerResult] = []

    async def __call__(self, result: RunnerResult) -> None:
        self.results.append(result)


EVENT_REPLY = {"tool_name": "event_reply", "operations": ["call"]}


def _ctx(**grants: Any) -> RunnerContext:
    return run_context(**grants)


@pytest.mark.parametrize(
    "case", PASS_THROUGH, ids=[f"{row[0]}-{i}" for i, row in enumerate(PASS_THROUGH)]
)
async def test_a_bound_method_is_the_run_api_call(case: Call) -> None:
    method, args, kwargs, action, payload, answer, expected = case
    peer = HostPeer(answers={action: answer})
    ctx = _ctx()
    async with connected(peer) as channel:
        api = AgentRunAPIProxy(ctx=ctx, plugin_runtime_handler=channel)
        with ctx.activate(api, _Sink()):  # type: ignore[arg-type]
            result = await getattr(ctx, method)(*args, **kwargs)
    assert result == expected
    [(sent_action, sent)] = peer.calls
    assert sent_action == action
    if action in TIMED:
        sent.pop("timeout")
    assert sent == {"run_id": "run-1", **payload}


def test_the_pass_throughs_cover_the_07_context_methods() -> None:
    covered = {row[0] for row in PASS_THROUGH}
    assert covered >= {
        "get_prompt", "call_tool", "history_page", "history_search", "event_get", "event_page",
        "steering_pull", "state_get", "state_set", "state_delete", "state_list", "run_get",
        "run_list", "run_events_page", "run_cancel", "run_append_result", "run_finalize",
    }  # fmt: skip


async def test_outside_a_run_the_context_refuses_and_after_one_it_is_inactive_again() -> None:
    ctx = _ctx()
    with pytest.raises(NotReadyError, match=r"not active: ctx\.api"):
        await ctx.state_get("conversation", "k")
    with pytest.raises(NotReadyError, match=r"ctx\.log"):
        await ctx.log("x")
    assert not ctx.active
    api = AgentRunAPIProxy(ctx=ctx, plugin_runtime_handler=None)  # type: ignore[arg-type]
    with ctx.activate(api, _Sink()) as bound:  # type: ignore[arg-type]
        assert bound is ctx
        assert ctx.active
        assert ctx.api is api
        with pytest.raises(RuntimeError, match="already active"), ctx.activate(api, _Sink()):  # type: ignore[arg-type]
            pass
        assert ctx.api is api  # the refused second activation left the first alone
    assert not ctx.active
    with pytest.raises(NotReadyError):
        _ = ctx.api


async def test_log_emits_a_processor_log_result_and_checks_the_level() -> None:
    ctx = _ctx()
    sink = _Sink()
    api = AgentRunAPIProxy(ctx=ctx, plugin_runtime_handler=None)  # type: ignore[arg-type]
    with ctx.activate(api, sink):  # type: ignore[arg-type]
        await ctx.log("fetched 3 pages", level="debug")
        await ctx.log(42)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="Invalid log level 'loud'"):
            await ctx.log("x", level="loud")
    assert [(r.run_id, r.type, r.data) for r in sink.results] == [
        ("run-1", RunnerResultType.PROCESSOR_LOG, {"text": "fetched 3 pages", "level": "debug"}),
        ("run-1", RunnerResultType.PROCESSOR_LOG, {"text": "42", "level": "info"}),
    ]


async def test_reply_text_goes_through_the_event_reply_tool() -> None:
    peer = HostPeer(answers={"call_tool": {"result": {"ok": True}}})
    ctx = _ctx(tools=[{"tool_name": "event_reply", "operations": ["call"]}])
    async with connected(peer) as channel:
        api = AgentRunAPIProxy(ctx=ctx, plugin_runtime_handler=channel)
        with ctx.activate(api, _Sink()):
            assert await ctx.reply("hello") == {"ok": True}
    assert peer.calls == [
        (
            "call_tool",
            {"run_id": "run-1", "tool_name": "event_reply", "parameters": {"text": "hello"}},
        )
    ]


async def test_a_reply_that_quotes_or_carries_a_chain_is_a_reply_message() -> None:
    peer = HostPeer(answers={"call_platform_api": {"result": {"message_id": 9}}})
    ctx = _ctx(tools=[EVENT_REPLY])
    chain = MessageChain([Plain(text="see "), At(target="u2")])
    async with connected(peer) as channel:
        api = AgentRunAPIProxy(ctx=ctx, plugin_runtime_handler=channel)
        with ctx.activate(api, _Sink()):
            assert await ctx.reply("quoted", quote_origin=True) == {"message_id": 9}
            assert await ctx.reply(chain) == {"message_id": 9}
    sent = [data["params"] for _, data in peer.calls]
    assert sent == [
        {"message": [{"type": "Plain", "text": "quoted"}], "quote_origin": True},
        {"message": chain.model_dump(mode="json"), "quote_origin": False},
    ]
    assert all(data["context_tool"] == "event_reply" for _, data in peer.calls)


async def test_box_calls_and_file_replies() -> None:
    file = {"id": "f1", "name": "out.csv", "type": "file", "size": 12, "path": "/workspace/out.csv"}
    peer = HostPeer(
        answers={
            "bind_box": {"box_id": "runner-ab", "outbox": "/workspace/outbox/run-1", "x": 1},
            "import_box_attachments": {"items": [{**file, "id": "attachment-0"}]},
            "export_box_files": {"items": [file]},
            "call_platform_api": {"result": {"sent": 1}},
        }
    )
    ctx = _ctx(
        tools=[{"tool_name": "t", "operations": ["detail", "call"]}, EVENT_REPLY],
        apis=[*ALL_APIS, "box"],
    )
    async with connected(peer) as channel:
        api = AgentRunAPIProxy(ctx=ctx, plugin_runtime_handler=channel)
        with ctx.activate(api, _Sink()):
            binding = await ctx.bind_box("runner-ab")
            imported = await ctx.import_box_attachments(["attachment-0"])
            exported = await ctx.export_box_files(["/workspace/out.csv"])
            sent = await ctx.reply_files([f.id for f in exported])
            tools = await ctx.get_available_tools()
    assert binding == BoxBinding(box_id="runner-ab", outbox="/workspace/outbox/run-1")
    assert [f.id for f in imported] == ["attachment-0"]
    assert exported == [BoxFile.model_validate(file)]
    assert sent == {"sent": 1}
    assert [(t["name"], t["operations"]) for t in tools] == [
        ("t", ["call", "detail"]),
        ("event_reply", ["call"]),
    ]
    assert [(a, {k: v for k, v in d.items() if k != "run_id"}) for a, d in peer.calls] == [
        ("bind_box", {"box_id": "runner-ab"}),
        ("import_box_attachments", {"attachment_ids": ["attachment-0"]}),
        ("export_box_files", {"paths": ["/workspace/out.csv"]}),
        ("call_platform_api", {"action": "send_message", "context_tool": "event_reply",
                               "params": {"message": []}, "file_ids": ["f1"]}),
    ]  # fmt: skip
    assert {d["run_id"] for _, d in peer.calls} == {"run-1"}


async def test_reply_stream_updates_then_finishes() -> None:
    peer = HostPeer(answers={"reply_stream": lambda data: {"result": {"op": data["operation"]}}})
    ctx = _ctx(tools=[EVENT_REPLY], apis=[*ALL_APIS, "reply_stream"])
    async with connected(peer) as channel:
        api = AgentRunAPIProxy(ctx=ctx, plugin_runtime_handler=channel)
        with ctx.activate(api, _Sink()):
            async with ctx.reply_stream() as reply:
                assert await reply.update("Working") == {"op": "update"}
                await reply.update("Working... done")
    assert [(d["operation"], d["text"]) for _, d in peer.calls] == [
        ("update", "Working"),
        ("update", "Working... done"),
        ("finish", "Working... done"),
    ]


def _with_event(data: dict[str, Any], bot_id: str | None = None) -> RunnerContext:
    ctx = _ctx()
    raw = ctx.model_dump()
    raw["event"]["data"] = data
    raw["conversation"]["bot_id"] = bot_id
    return RunnerContext.model_validate(raw)


async def test_platform_event_is_the_typed_event_of_the_envelope() -> None:
    data = {
        "type": "message.received",
        "bot_uuid": "bot-7",
        "message_chain": [{"type": "Plain", "text": "hi"}, {"type": "At", "target": "u2"}],
        "sender": {"id": "u1", "nickname": "Ann"},
    }
    ctx = _with_event(copy.deepcopy(data))
    event = ctx.platform_event
    assert isinstance(event, platform_events.MessageReceivedEvent)
    assert [type(c) for c in event.message_chain] == [Plain, At]
    assert ctx.event.data == data  # the envelope is left as it was
    legacy = _with_event({"type": "FriendMessage", "time": 1.0})
    with pytest.raises(ValueError, match="unknown event-based platform event type"):
        _ = legacy.platform_event


async def test_get_bot_uuid_prefers_the_conversation_then_the_event() -> None:
    assert await _with_event({"bot_uuid": "from-event"}, bot_id="from-conv").get_bot_uuid() == (
        "from-conv"
    )
    assert await _with_event({"bot_uuid": "from-event"}).get_bot_uuid() == "from-event"
    with pytest.raises(ValueError, match="not associated with a platform bot"):
        await _with_event({}).get_bot_uuid()


async def test_a_reply_stream_that_raises_is_aborted() -> None:
    peer = HostPeer(answers={"reply_stream": {"result": None}})
    ctx = _ctx(tools=[EVENT_REPLY], apis=[*ALL_APIS, "reply_stream"])

    async def broken_reply() -> None:
        async with ctx.reply_stream() as reply:
            await reply.update("half")
            raise KeyError("boom")

    async with connected(peer) as channel:
        api = AgentRunAPIProxy(ctx=ctx, plugin_runtime_handler=channel)
        with ctx.activate(api, _Sink()), pytest.raises(KeyError):
            await broken_reply()
    assert [d["operation"] for _, d in peer.calls] == ["update", "abort"]


async def test_box_and_reply_calls_need_their_grants_and_send_nothing_without() -> None:
    peer = HostPeer(answers={})
    ctx = _ctx()  # no "box" or "reply_stream" API, no event_reply tool
    async with connected(peer) as channel:
        api = AgentRunAPIProxy(ctx=ctx, plugin_runtime_handler=channel)
        with ctx.activate(api, _Sink()):
            for call in (
                ctx.bind_box("b"),
                ctx.export_box_files(["/workspace/a"]),
                ctx.import_box_attachments(),
                api.get_box_status(),
                api.acquire_box("k"),
            ):
                with pytest.raises(PermissionDeniedError, match="box is not available"):
                    await call
            with pytest.raises(PermissionDeniedError, match="event_reply"):
                await ctx.reply_files(["f1"])
            with pytest.raises(PermissionDeniedError, match="event_reply"):
                await ctx.reply("x", quote_origin=True)
            with pytest.raises(PermissionDeniedError, match="reply_stream"):
                async with ctx.reply_stream():
                    pass
    assert peer.calls == []
