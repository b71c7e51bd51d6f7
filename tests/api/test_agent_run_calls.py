"""Every AgentRunAPIProxy method against a real RPC peer playing the host: the action
and payload sent (always with ``run_id``) and the typed value returned."""

from __future__ import annotations

from typing import Any

import pytest

from langbot_plugin.api.entities.builtin import agent_runner as ar
from langbot_plugin.api.entities.builtin.provider.message import (
    LLMInvokeResult,
    LLMStreamEvent,
    Message,
)
from langbot_plugin.api.entities.builtin.resource.tool import LLMTool
from langbot_plugin.api.proxies.agent_run import AgentRunAPIProxy
from tests.api.helpers import HostPeer, connected
from tests.api.runs import run_context

pytestmark = pytest.mark.anyio

HELLO = [Message(role="user", content="hi")]
TOOL = LLMTool(name="t", human_desc="h", description="d", parameters={"type": "object"})
LLM = {
    "llm_model_uuid": "m",
    "messages": [HELLO[0].model_dump()],
    "funcs": [],
    "extra_args": {},
}
RUN = {"run_id": "r9", "status": "running", "cancel_requested_at": None}
ITEM = {"transcript_id": "t1", "event_id": "e1", "role": "user", "content": "old"}
RECORD = {"event_id": "e1", "event_type": "message.received", "source": "platform"}
STEER = {
    "claimed_run_id": "run-1",
    "runner_id": "x",
    "event": RECORD,
    "input": {"text": "and also"},
}
RESULT = ar.AgentRunResult.run_completed("run-1")

# method, args, kwargs, action, payload (without run_id, timeout), host answer, check
Call = tuple[str, tuple[Any, ...], dict[str, Any], str, dict[str, Any], dict[str, Any], Any]
CALLS: list[Call] = [
    ("count_tokens", ("m", HELLO), {}, "count_tokens", LLM, {"tokens": 12}, 12),
    ("invoke_llm", ("m", HELLO), {"remove_think": True}, "invoke_llm",
     {**LLM, "remove_think": True}, {"message": {"role": "assistant", "content": "yo"}},
     Message(role="assistant", content="yo")),
    ("invoke_llm_with_usage", ("m", HELLO, [TOOL]), {}, "invoke_llm",
     {**LLM, "funcs": [TOOL.model_dump()]},
     {"message": {"role": "assistant", "content": "yo"}, "usage": {"total_tokens": 5}},
     LLMInvokeResult.model_validate(
         {"message": {"role": "assistant", "content": "yo"}, "usage": {"total_tokens": 5}})),
    ("invoke_rerank", ("m", "q", ["a", "b"]), {"top_k": 1}, "invoke_rerank",
     {"rerank_model_uuid": "m", "query": "q", "documents": ["a", "b"], "top_k": 1,
      "extra_args": {}}, {"results": [{"index": 1, "relevance_score": 0.8}]},
     [{"index": 1, "relevance_score": 0.8}]),
    ("get_tool_detail", ("t",), {}, "get_tool_detail", {"tool_name": "t"},
     {"tool": {"name": "t", "description": "d", "parameters": {}}},
     {"name": "t", "description": "d", "parameters": {}}),
    ("call_tool", ("t", {"x": 1}), {}, "call_tool", {"tool_name": "t", "parameters": {"x": 1}},
     {"result": {"ok": True}}, {"ok": True}),
    ("retrieve_knowledge", ("kb", "q"), {"top_k": 3}, "retrieve_knowledge_base",
     {"kb_id": "kb", "query_text": "q", "top_k": 3, "filters": {}},
     {"results": [{"id": "1", "content": [], "metadata": {}, "distance": 0.1}]},
     [{"id": "1", "content": [], "metadata": {}, "distance": 0.1}]),
    ("set_plugin_storage", ("k", b"v"), {}, "set_plugin_storage",
     {"key": "k", "value_base64": "dg=="}, {}, None),
    ("get_plugin_storage", ("k",), {}, "get_plugin_storage", {"key": "k"},
     {"value_base64": "dg=="}, b"v"),
    ("get_plugin_storage_keys", (), {}, "get_plugin_storage_keys", {}, {"keys": ["k"]}, ["k"]),
    ("delete_plugin_storage", ("k",), {}, "delete_plugin_storage", {"key": "k"}, {}, None),
    ("set_workspace_storage", ("k", b"w"), {}, "set_workspace_storage",
     {"key": "k", "value_base64": "dw=="}, {}, None),
    ("get_workspace_storage", ("k",), {}, "get_workspace_storage", {"key": "k"},
     {"value_base64": "dw=="}, b"w"),
    ("get_workspace_storage_keys", (), {}, "get_workspace_storage_keys", {}, {"keys": []}, []),
    ("delete_workspace_storage", ("k",), {}, "delete_workspace_storage", {"key": "k"}, {}, None),
    ("get_langbot_version", (), {}, "get_langbot_version", {}, {"version": "v4.11.2"}, "v4.11.2"),
    ("get_prompt", (), {}, "get_prompt", {}, {"prompt": [{"role": "system", "content": "s"}]},
     [{"role": "system", "content": "s"}]),
    ("history_page", (), {"limit": 2, "direction": "forward", "after_cursor": "c9"},
     "history_page",
     {"conversation_id": None, "before_cursor": None, "after_cursor": "c9", "limit": 2,
      "direction": "forward", "include_attachments": False},
     {"items": [ITEM], "next_cursor": "c10", "has_more": True},
     ar.HistoryPage(items=[ar.TranscriptItem.model_validate(ITEM)], next_cursor="c10",
                    has_more=True)),
    ("history_search", ("old",), {}, "history_search",
     {"query": "old", "filters": {}, "top_k": 10}, {"items": [ITEM], "query": "old"},
     ar.HistorySearchResult(items=[ar.TranscriptItem.model_validate(ITEM)], query="old")),
    ("event_get", ("e1",), {}, "event_get", {"event_id": "e1"}, RECORD,
     ar.AgentEventRecord.model_validate(RECORD)),
    ("event_page", (), {"event_types": ["message.received"]}, "event_page",
     {"conversation_id": None, "event_types": ["message.received"], "before_cursor": None,
      "limit": 50}, {"items": [RECORD]},
     ar.EventPage(items=[ar.AgentEventRecord.model_validate(RECORD)])),
    ("steering_pull", (), {"mode": "one"}, "steering_pull", {"mode": "one", "limit": None},
     {"items": [STEER]}, ar.SteeringPullResult.model_validate({"items": [STEER]})),
    ("run_get", (), {}, "run_get", {"target_run_id": "run-1"}, RUN,
     ar.AgentRun.model_validate(RUN)),
    ("run_get", ("other",), {}, "run_get", {"target_run_id": "other"}, RUN,
     ar.AgentRun.model_validate(RUN)),
    ("run_list", (), {"statuses": ["running"]}, "run_list",
     {"conversation_id": None, "statuses": ["running"], "before_cursor": None, "limit": 50},
     {"items": [RUN], "total_count": 1},
     ar.RunPage(items=[ar.AgentRun.model_validate(RUN)], total_count=1)),
    ("run_events_page", (), {}, "run_events_page",
     {"target_run_id": "run-1", "before_cursor": None, "after_cursor": None, "limit": 50,
      "direction": "forward"}, {"items": [{"run_id": "run-1", "sequence": 1, "type": "x"}]},
     ar.RunEventPage.model_validate({"items": [{"run_id": "run-1", "sequence": 1, "type": "x"}]})),
    ("run_cancel", (), {"reason": "user"}, "run_cancel",
     {"target_run_id": "run-1", "reason": "user"}, RUN, ar.AgentRun.model_validate(RUN)),
    ("run_append_result", (RESULT,), {}, "run_append_result",
     {"target_run_id": "run-1", "result": RESULT.model_dump(mode="json")},
     {"run_id": "run-1", "sequence": 3, "type": "run.completed"},
     ar.AgentRunEvent(run_id="run-1", sequence=3, type="run.completed")),
    ("run_finalize", (), {"status": "completed"}, "run_finalize",
     {"target_run_id": "run-1", "status": "completed", "reason": None}, RUN,
     ar.AgentRun.model_validate(RUN)),
    ("state_get", ("conversation", "k"), {}, "state_get", {"scope": "conversation", "key": "k"},
     {"value": {"n": 1}}, {"value": {"n": 1}}),
    ("state_set", ("actor", "k", [1]), {}, "state_set",
     {"scope": "actor", "key": "k", "value": [1]}, {"success": True}, {"success": True}),
    ("state_delete", ("subject", "k"), {}, "state_delete", {"scope": "subject", "key": "k"},
     {"success": False}, {"success": False}),
    ("state_list", ("runner",), {"prefix": "p."}, "state_list",
     {"scope": "runner", "prefix": "p.", "limit": 100}, {"keys": ["p.a"], "has_more": False},
     {"keys": ["p.a"], "has_more": False}),
]  # fmt: skip

TIMED = {"count_tokens", "invoke_llm"}  # actions whose payload carries the bounded timeout


@pytest.mark.parametrize("case", CALLS, ids=[f"{row[0]}-{i}" for i, row in enumerate(CALLS)])
async def test_run_api_call(case: Call) -> None:
    method, args, kwargs, action, payload, answer, expected = case
    peer = HostPeer(answers={action: answer})
    async with connected(peer) as channel:
        api = AgentRunAPIProxy(ctx=run_context(), plugin_runtime_handler=channel)
        result = await getattr(api, method)(*args, **kwargs)
    assert result == expected
    assert type(result) is type(expected)
    [(sent_action, sent)] = peer.calls
    assert sent_action == action
    timeout = sent.pop("timeout", None)
    assert (timeout is not None) == (action in TIMED)
    if timeout is not None:
        assert 0 < timeout <= 600
    assert sent == {"run_id": "run-1", **payload}


async def test_grant_listing_needs_no_call() -> None:
    ctx = run_context()
    api = AgentRunAPIProxy(ctx=ctx, plugin_runtime_handler=None)  # type: ignore[arg-type]
    assert api.run_id == "run-1"
    assert [m.model_id for m in api.get_allowed_models()] == ["m"]
    assert [t.tool_name for t in api.get_allowed_tools()] == ["t"]
    assert [k.kb_id for k in api.get_allowed_knowledge_bases()] == ["kb"]


async def test_llm_stream_events_and_chunks() -> None:
    items = [
        {"chunk": {"role": "assistant", "content": "He"}},
        {"chunk": {"role": "assistant", "content": "llo", "is_final": True}},
        {"usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}},
    ]
    peer = HostPeer(streams={"invoke_llm_stream": items})
    async with connected(peer) as channel:
        api = AgentRunAPIProxy(ctx=run_context(), plugin_runtime_handler=channel)
        events = [e async for e in api.invoke_llm_stream_events("m", HELLO, remove_think=False)]
        chunks = [c async for c in api.invoke_llm_stream("m", HELLO)]
    assert all(isinstance(e, LLMStreamEvent) for e in events)
    assert events[2].usage is not None
    assert events[2].usage.total_tokens == 5
    assert [c.content for c in chunks] == ["He", "llo"]
    first = peer.calls[0][1]
    assert first["run_id"] == "run-1"
    assert first["remove_think"] is False
    assert 0 < first["timeout"] <= 120
    assert "remove_think" not in peer.calls[1][1]
