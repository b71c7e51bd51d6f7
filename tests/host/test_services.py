"""The service table over a real in-memory RPC link: answers and every refusal code."""

from __future__ import annotations

from typing import Any

import pytest

from langbot_plugin.api.entities.builtin.agent_runner.page_results import (
    AgentEventRecord,
    EventPage,
    HistoryPage,
    HistorySearchResult,
)
from langbot_plugin.api.entities.builtin.agent_runner.run_ledger import (
    AgentRun,
    RunEventPage,
    RunPage,
)
from langbot_plugin.api.entities.builtin.agent_runner.steering import SteeringPullResult
from langbot_plugin.host.run_host import RunHost
from langbot_plugin.host.state_store import StateStore
from langbot_plugin.rpc import RequestContext, Route, RouteTable
from langbot_plugin.rpc.errors import RPCError
from tests.host.clock import FakeClock
from tests.host.peers import OWNER, code_of, payload, served, start

pytestmark = pytest.mark.anyio

#: Each run-only action, a valid payload, and the context API it needs.
ACTIONS: list[tuple[str, dict[str, Any], str]] = [
    ("state_get", {"scope": "conversation", "key": "k"}, "state"),
    ("state_set", {"scope": "conversation", "key": "k", "value": 1}, "state"),
    ("state_delete", {"scope": "conversation", "key": "k"}, "state"),
    ("state_list", {"scope": "conversation"}, "state"),
    ("history_page", {}, "history_page"),
    ("history_search", {"query": "x"}, "history_search"),
    ("event_get", {"event_id": "e"}, "event_get"),
    ("event_page", {}, "event_page"),
    ("steering_pull", {"mode": "all"}, "steering_pull"),
    ("get_prompt", {}, "prompt_get"),
    ("run_get", {}, "run_get"),
    ("run_list", {}, "run_list"),
    ("run_events_page", {}, "run_events_page"),
    ("run_cancel", {}, "run_cancel"),
]


async def test_state_round_trip_has_the_host_answers() -> None:
    host = RunHost()
    run = await start(host)
    async with served(host) as rt:
        data = payload(run, scope="conversation", key="external.session_id")
        assert await rt.call("state_get", data) == {"value": None}
        assert await rt.call("state_set", {**data, "value": {"id": "s1"}}) == {"success": True}
        assert await rt.call("state_get", data) == {"value": {"id": "s1"}}
        listed = await rt.call("state_list", payload(run, scope="conversation", prefix="ext"))
        assert listed == {"keys": ["external.session_id"], "has_more": False}
        assert await rt.call("state_delete", data) == {"success": True}
        assert await rt.call("state_delete", data) == {"success": False}
        # every scope with an identity works; the run's actor is the sender
        actor = payload(run, scope="actor", key="pref", value="short")
        assert await rt.call("state_set", actor) == {"success": True}
        runner = payload(run, scope="runner", key="pref", value="global")
        assert await rt.call("state_set", runner) == {"success": True}
    # and it is there for the next run of the same runner and actor
    again = await start(host, "again")
    assert again.context["state"]["actor"] == {"pref": "short"}
    assert again.context["state"]["runner"] == {"pref": "global"}
    assert again.context["state"]["conversation"] == {
        "external.conversation_id": "person_local-user"
    }


async def test_requests_without_a_live_owned_run_are_refused() -> None:
    clock = FakeClock()
    host = RunHost(clock=clock)
    run = await start(host, timeout=10)
    finished = await start(host, "second")
    host.registry.finish(finished.run_id, "completed")
    async with served(host) as rt:
        for action, data, _api in ACTIONS:
            # no run named: these actions exist only for runs
            assert await code_of(rt, action, {**data, "caller_plugin_identity": OWNER}) == (
                "run_not_live"
            ), action
            assert await code_of(rt, action, payload("nope", **data)) == "run_not_live", action
            no_caller = {**payload(run, **data), "caller_plugin_identity": None}
            assert await code_of(rt, action, no_caller) == "run_not_owned", action
            stranger = {**payload(run, **data), "caller_plugin_identity": "evil/plugin"}
            assert await code_of(rt, action, stranger) == "run_not_owned", action
            assert await code_of(rt, action, payload(finished, **data)) == "run_not_live", action
        clock.advance(11)
        for action, data, _api in ACTIONS:
            assert await code_of(rt, action, payload(run, **data)) == "deadline_exceeded", action


async def test_each_action_needs_its_context_api() -> None:
    host = RunHost()
    async with served(host) as rt:
        for action, data, api in ACTIONS:
            others = [name for _a, _d, name in ACTIONS if name != api]
            run = await start(host, available_apis=others)
            assert await code_of(rt, action, payload(run, **data)) == "api_not_available", action


async def test_state_scopes_keys_and_values_are_limited() -> None:
    host = RunHost()
    host.state = StateStore(host.db, max_keys_per_scope=1)
    host.services.state = host.state
    run = await start(host, state_scopes=["conversation", "subject"])
    async with served(host) as rt:
        actor = payload(run, scope="actor", key="k")
        assert await code_of(rt, "state_get", actor) == "resource_not_granted"
        # enabled, but the run's subject has no id: no key for that scope
        subject = payload(run, scope="subject", key="k")
        assert await code_of(rt, "state_get", subject) == "resource_not_granted"
        assert await code_of(rt, "state_get", payload(run, scope="galaxy", key="k")) == (
            "invalid_params"
        )
        assert await code_of(rt, "state_get", payload(run, scope="conversation")) == (
            "invalid_params"
        )
        big = payload(run, scope="conversation", key="k", value="x" * 300_000)
        assert await code_of(rt, "state_set", big) == "message_too_large"
        long_key = payload(run, scope="conversation", key="k" * 300, value=1)
        assert await code_of(rt, "state_set", long_key) == "message_too_large"
        await rt.call("state_set", payload(run, scope="conversation", key="a", value=1))
        full = payload(run, scope="conversation", key="b", value=1)
        assert await code_of(rt, "state_set", full) == "state_quota_exceeded"


async def test_history_pages_start_at_the_message_that_started_the_run() -> None:
    host = RunHost()
    first = await start(host, "first question")
    await host.transcript.append(first.session.scope, role="assistant", content="first answer")
    run = await start(host, "second question")
    access = run.context["context"]
    assert access["has_history_before"] is True
    async with served(host) as rt:
        page = await rt.call(
            "history_page", payload(run, before_cursor=access["latest_cursor"], limit=2)
        )
        parsed = HistoryPage.model_validate(page)
        assert [i.content for i in parsed.items] == ["second question", "first answer"]
        assert parsed.has_more is True
        older = await rt.call("history_page", payload(run, before_cursor=page["next_cursor"]))
        assert [i["content"] for i in older["items"]] == ["first question"]
        assert set(page) == {"items", "next_cursor", "prev_cursor", "has_more"}
        found = await rt.call("history_search", payload(run, query="QUESTION", top_k=5))
        result = HistorySearchResult.model_validate(found)
        assert (result.total_count, result.query) == (2, "QUESTION")
        users = await rt.call(
            "history_search", payload(run, query="", filters={"roles": ["assistant"]})
        )
        assert [i["content"] for i in users["items"]] == ["first answer"]
        elsewhere = payload(run, conversation_id="person_someone-else")
        assert await code_of(rt, "history_page", elsewhere) == "resource_not_granted"
        search_elsewhere = payload(run, query="x", filters={"conversation_id": "group_x"})
        assert await code_of(rt, "history_search", search_elsewhere) == "resource_not_granted"
        bad_filter = payload(run, query="x", filters={"roles": "user"})
        assert await code_of(rt, "history_search", bad_filter) == "invalid_params"
        assert await code_of(rt, "history_page", payload(run, before_cursor="x")) == (
            "invalid_params"
        )
        same = payload(run, conversation_id=access["conversation_id"], limit=1)
        assert len((await rt.call("history_page", same))["items"]) == 1


async def test_events_are_visible_within_the_conversation() -> None:
    host = RunHost()
    run = await start(host, "hi")
    other = await start(host, "hey", launcher_id="someone-else")
    async with served(host) as rt:
        event_id = run.context["event"]["event_id"]
        record = await rt.call("event_get", payload(run, event_id=event_id))
        assert AgentEventRecord.model_validate(record).event_type == "message.received"
        assert record["input_summary"] == "hi"
        foreign = payload(run, event_id=other.context["event"]["event_id"])
        assert await code_of(rt, "event_get", foreign) == "resource_not_granted"
        assert await code_of(rt, "event_get", payload(run, event_id="missing")) == "not_found"
        page = EventPage.model_validate(await rt.call("event_page", payload(run)))
        assert [e.event_id for e in page.items] == [event_id]
        typed = await rt.call("event_page", payload(run, event_types=["steering.injected"]))
        assert typed["items"] == []
        assert await code_of(rt, "event_page", payload(run, conversation_id="x")) == (
            "resource_not_granted"
        )


async def test_steering_and_prompt() -> None:
    host = RunHost()
    prompt = [{"role": "system", "content": "be brief"}]
    run = await start(host, prompt=prompt)
    async with served(host) as rt:
        assert await rt.call("steering_pull", payload(run)) == {"items": []}
        assert await host.steer(run.run_id, "also this")
        assert await host.steer(run.run_id, "and that")
        one = SteeringPullResult.model_validate(
            await rt.call("steering_pull", payload(run, mode="one"))
        )
        assert [i.input.text for i in one.items] == ["also this"]
        assert one.items[0].claimed_run_id == run.run_id
        rest = await rt.call("steering_pull", payload(run, mode="all", limit=5))
        assert [i["input"]["text"] for i in rest["items"]] == ["and that"]
        assert await code_of(rt, "steering_pull", payload(run, mode="most")) == "invalid_params"
        injected = await rt.call("event_page", payload(run, event_types=["steering.injected"]))
        assert len(injected["items"]) == 2
        history = await rt.call("history_page", payload(run))
        assert [i["content"] for i in history["items"]][:2] == ["and that", "also this"]
        assert await rt.call("get_prompt", payload(run)) == {"prompt": prompt}
    host.registry.finish(run.run_id, "completed")
    assert not await host.steer(run.run_id, "too late")
    no_grant = await start(host, available_apis=["state"])
    assert not await host.steer(no_grant.run_id, "x")


async def test_the_run_ledger_actions() -> None:
    host = RunHost()
    earlier = await start(host, "earlier")
    host.registry.record_event(earlier.session, sequence=1, kind="message.delta", data={"a": 1})
    host.registry.record_event(earlier.session, sequence=2, kind="run.completed", data={})
    host.registry.finish(earlier.run_id, "completed")
    foreign = await start(host, "foreign", launcher_id="someone-else")
    run = await start(host, "now")
    async with served(host) as rt:
        mine = AgentRun.model_validate(await rt.call("run_get", payload(run)))
        assert (mine.run_id, mine.status) == (run.run_id, "running")
        got = await rt.call("run_get", payload(run, target_run_id=earlier.run_id))
        assert got["status"] == "completed"
        assert await code_of(rt, "run_get", payload(run, target_run_id=foreign.run_id)) == (
            "resource_not_granted"
        )
        assert await code_of(rt, "run_get", payload(run, target_run_id="missing")) == "not_found"

        listed = RunPage.model_validate(await rt.call("run_list", payload(run, limit=1)))
        assert [r.run_id for r in listed.items] == [run.run_id]
        assert (listed.has_more, listed.total_count) == (True, 2)
        rest = await rt.call("run_list", payload(run, before_cursor=listed.next_cursor))
        assert [r["run_id"] for r in rest["items"]] == [earlier.run_id]
        done = await rt.call("run_list", payload(run, statuses=["completed"]))
        assert [r["run_id"] for r in done["items"]] == [earlier.run_id]
        assert await code_of(rt, "run_list", payload(run, conversation_id="x")) == (
            "resource_not_granted"
        )

        events = RunEventPage.model_validate(
            await rt.call("run_events_page", payload(run, target_run_id=earlier.run_id, limit=1))
        )
        assert [e.type for e in events.items] == ["message.delta"]
        assert events.has_more is True
        later = await rt.call(
            "run_events_page",
            payload(run, target_run_id=earlier.run_id, after_cursor=events.next_cursor),
        )
        assert [e["sequence"] for e in later["items"]] == [2]
        backward = await rt.call(
            "run_events_page", payload(run, target_run_id=earlier.run_id, direction="backward")
        )
        assert [e["sequence"] for e in backward["items"]] == [2, 1]
        sideways = payload(run, target_run_id=earlier.run_id, direction="sideways")
        assert await code_of(rt, "run_events_page", sideways) == "invalid_params"

        cancelled = await rt.call("run_cancel", payload(run, reason="enough"))
        assert cancelled["cancel_requested_at"] is not None
        assert cancelled["status_reason"] == "enough"
        assert run.session.cancel_requested.is_set()
        assert await code_of(rt, "run_cancel", payload(run, target_run_id=foreign.run_id)) == (
            "resource_not_granted"
        )


class Inner:
    """A stand-in for the host's own actions (models, tools, storage)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []

    def table(self) -> RouteTable:
        async def unary(ctx: RequestContext) -> dict[str, Any]:
            self.seen.append((ctx.request.action, dict(ctx.data)))
            return {"ok": True}

        async def stream(ctx: RequestContext) -> Any:
            self.seen.append((ctx.request.action, dict(ctx.data)))
            yield {"chunk": {"role": "assistant", "content": "hi"}}

        names = [
            "invoke_llm",
            "count_tokens",
            "call_tool",
            "get_tool_detail",
            "set_binary_storage",
            "invoke_rerank",
            "retrieve_knowledge_base",
            "get_box_status",
            "send_message",
        ]
        return RouteTable(
            {name: Route(unary) for name in names},
            invoke_llm_stream=Route(stream, stream=True),
        )


async def test_model_tool_and_storage_calls_are_gated_by_the_run() -> None:
    host = RunHost()
    inner = Inner()
    run = await start(host)
    async with served(host, inner.table()) as rt:
        ok = [
            ("invoke_llm", {"llm_model_uuid": "m-invoke", "messages": []}),
            ("count_tokens", {"llm_model_uuid": "m-all", "messages": []}),
            # empty operations are the kind's defaults, as the released host reads them
            ("count_tokens", {"llm_model_uuid": "m-none", "messages": []}),
            ("call_tool", {"tool_name": "adder", "parameters": {"a": 1}}),
            ("get_tool_detail", {"tool_name": "peek"}),
            ("set_binary_storage", {"owner_type": "plugin", "key": "k", "value_base64": ""}),
            ("send_message", {"bot_uuid": "b"}),  # no resource check, but the run must be live
        ]
        for action, data in ok:
            assert await rt.call(action, payload(run, **data)) == {"ok": True}, action
        items = [
            i async for i in rt.stream("invoke_llm_stream", payload(run, llm_model_uuid="m-all"))
        ]
        assert items == [{"chunk": {"role": "assistant", "content": "hi"}}]

        refused = [
            ("invoke_llm", {"llm_model_uuid": "unlisted"}, "resource_not_granted"),
            ("count_tokens", {"llm_model_uuid": "m-invoke"}, "resource_not_granted"),
            ("call_tool", {"tool_name": "peek", "parameters": {}}, "resource_not_granted"),
            ("call_tool", {"tool_name": "adder"}, "invalid_params"),
            ("get_tool_detail", {"tool_name": "missing"}, "resource_not_granted"),
            ("invoke_rerank", {"rerank_model_uuid": "m-all"}, "resource_not_granted"),
            ("retrieve_knowledge_base", {"kb_id": "kb"}, "resource_not_granted"),
            ("set_binary_storage", {"owner_type": "workspace"}, "resource_not_granted"),
            ("set_binary_storage", {"owner_type": "galaxy"}, "invalid_params"),
            ("get_box_status", {}, "api_not_available"),
        ]
        for action, data, code in refused:
            assert await code_of(rt, action, payload(run, **data)) == code, (action, data)
        stream_refused = payload(run, llm_model_uuid="m-invoke")
        with pytest.raises(RPCError) as info:
            [i async for i in rt.stream("invoke_llm_stream", stream_refused)]
        assert info.value.code == "resource_not_granted"
        stranger = {**payload(run, llm_model_uuid="m-invoke"), "caller_plugin_identity": "x/y"}
        assert await code_of(rt, "invoke_llm", stranger) == "run_not_owned"
        assert await code_of(rt, "invoke_llm", payload("nope", llm_model_uuid="m")) == (
            "run_not_live"
        )
        # without run_id: a plugin-level call, what any plugin may make; a run's grants
        # neither widen nor narrow it (the SDK sends a run's own calls with its run_id)
        assert await rt.call("invoke_llm", {"llm_model_uuid": "anything"}) == {"ok": True}
        # ... but an action that exists only for runs is refused without one
        for action in ("state_get", "history_page", "event_page", "steering_pull", "run_list"):
            assert await code_of(rt, action, {"scope": "runner", "key": "k"}) == "run_not_live"
        assert await code_of(rt, "not_an_action", {}) == "action_not_found"
    gated = [action for action, _ in inner.seen]
    assert "invoke_rerank" not in gated
    assert gated.count("invoke_llm") == 2


async def test_a_lenient_gate_passes_runs_it_never_registered() -> None:
    host = RunHost()
    inner = Inner()
    run = await start(host)
    async with served(host, inner.table(), strict=False) as rt:
        unknown = payload("started-elsewhere", llm_model_uuid="anything")
        assert await rt.call("invoke_llm", unknown) == {"ok": True}
        # a run it knows is still enforced
        known = payload(run, llm_model_uuid="unlisted")
        assert await code_of(rt, "invoke_llm", known) == "resource_not_granted"
        # and the run-only actions always need a known run
        assert await code_of(
            rt, "state_get", payload("started-elsewhere", scope="runner", key="k")
        ) == ("run_not_live")
