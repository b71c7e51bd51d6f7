"""Plugin-level and query-level proxies against a real RPC peer playing the host."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from langbot_plugin.api.entities.builtin.platform.message import MessageChain, Plain
from langbot_plugin.api.entities.builtin.provider.message import Message
from langbot_plugin.api.entities.builtin.resource.tool import LLMTool
from langbot_plugin.api.proxies import LangBotAPIProxy
from langbot_plugin.api.proxies.event_context import EventContextProxy
from langbot_plugin.api.proxies.execute_context import ExecuteContextProxy
from langbot_plugin.rpc.errors import MalformedMessageError, NotFoundError, NotReadyError
from tests.api.helpers import HostPeer, connected
from tests.fixtures.reference.cases import CASES, FRIEND_MESSAGE

pytestmark = pytest.mark.anyio

HELLO = [Message(role="user", content="hi")]
TOOL = LLMTool(name="t", human_desc="h", description="d", parameters={})

# method, args, action, expected payload, host answer, expected return
PLUGIN_CALLS: list[tuple[str, tuple[Any, ...], str, dict[str, Any], dict[str, Any], Any]] = [
    ("get_langbot_version", (), "get_langbot_version", {}, {"version": "v4"}, "v4"),
    ("get_bots", (), "get_bots", {}, {"bots": ["b"]}, ["b"]),
    ("get_bot_info", ("b",), "get_bot_info", {"bot_uuid": "b"}, {"bot": {"n": 1}}, {"n": 1}),
    (
        "send_message",
        ("b", "group", "9", MessageChain([Plain(text="x")])),
        "send_message",
        {"bot_uuid": "b", "target_type": "group", "target_id": "9",
         "message_chain": [{"type": "Plain", "text": "x"}]},
        {"result": {"id": 1}},
        {"id": 1},
    ),
    (
        "call_platform_api",
        ("b", "get_group_info"),
        "call_platform_api",
        {"bot_uuid": "b", "action": "get_group_info", "params": {}},
        {"result": 7},
        7,
    ),
    ("get_llm_models", (), "get_llm_models", {}, {"llm_models": ["m"]}, ["m"]),
    (
        "invoke_llm",
        ("m", HELLO, [TOOL]),
        "invoke_llm",
        {"llm_model_uuid": "m", "messages": [HELLO[0].model_dump()],
         "funcs": [{"name": "t", "human_desc": "h", "description": "d", "parameters": {}}],
         "extra_args": {}, "timeout": 120.0},
        {"message": {"role": "assistant", "content": "yo"}},
        Message(role="assistant", content="yo"),
    ),
    (
        "invoke_embedding",
        ("e", ["a"]),
        "invoke_embedding",
        {"embedding_model_uuid": "e", "texts": ["a"]},
        {"vectors": [[0.5]]},
        [[0.5]],
    ),
    (
        "invoke_rerank",
        ("r", "q", ["d"]),
        "invoke_rerank",
        {"rerank_model_uuid": "r", "query": "q", "documents": ["d"], "top_k": None,
         "extra_args": {}},
        {"results": [{"index": 0, "relevance_score": 0.9}]},
        [{"index": 0, "relevance_score": 0.9}],
    ),
    ("set_plugin_storage", ("k", b"\x00v"), "set_plugin_storage",
     {"key": "k", "value_base64": "AHY="}, {}, None),
    ("get_plugin_storage", ("k",), "get_plugin_storage", {"key": "k"},
     {"value_base64": "AHY="}, b"\x00v"),
    ("get_plugin_storage_keys", (), "get_plugin_storage_keys", {}, {"keys": ["k"]}, ["k"]),
    ("delete_plugin_storage", ("k",), "delete_plugin_storage", {"key": "k"}, {}, None),
    ("set_workspace_storage", ("k", b"w"), "set_workspace_storage",
     {"key": "k", "value_base64": "dw=="}, {}, None),
    ("get_workspace_storage", ("k",), "get_workspace_storage", {"key": "k"},
     {"value_base64": "dw=="}, b"w"),
    ("get_workspace_storage_keys", (), "get_workspace_storage_keys", {}, {"keys": []}, []),
    ("delete_workspace_storage", ("k",), "delete_workspace_storage", {"key": "k"}, {}, None),
    ("get_config_file", ("f",), "get_config_file", {"file_key": "f"},
     {"file_base64": base64.b64encode(b"cfg").decode()}, b"cfg"),
    ("list_plugins_manifest", (), "list_plugins_manifest", {}, {"plugins": []}, []),
    ("list_commands", (), "list_commands", {}, {"commands": [{"n": 1}]}, [{"n": 1}]),
    ("list_tools", (), "list_tools", {}, {"tools": []}, []),
    ("get_tool_detail", ("t",), "get_tool_detail", {"tool_name": "t"}, {"tool": {"name": "t"}},
     {"name": "t"}),
    (
        "call_tool",
        ("t", {"a": 1}, {"s": 1}, 4),
        "call_tool",
        {"tool_name": "t", "tool_parameters": {"a": 1}, "session": {"s": 1}, "query_id": 4},
        {"tool_response": "ok"},
        "ok",
    ),
    (
        "vector_upsert",
        ("c", [[1.0]], ["i"], None, ["doc"]),
        "vector_upsert",
        {"collection_id": "c", "vectors": [[1.0]], "ids": ["i"], "metadata": None,
         "documents": ["doc"]},
        {},
        None,
    ),
    (
        "vector_search",
        ("c", [1.0]),
        "vector_search",
        {"collection_id": "c", "query_vector": [1.0], "top_k": 5, "filters": None,
         "search_type": "vector", "query_text": "", "vector_weight": None},
        {"results": [{"id": "i"}]},
        [{"id": "i"}],
    ),
    ("vector_delete", ("c", ["f"]), "vector_delete",
     {"collection_id": "c", "file_ids": ["f"], "filters": None}, {"count": 2}, 2),
    ("vector_list", ("c",), "vector_list",
     {"collection_id": "c", "filters": None, "limit": 20, "offset": 0},
     {"items": [], "total": 0}, {"items": [], "total": 0}),
    ("list_knowledge_bases", (), "list_knowledge_bases", {}, {"knowledge_bases": []}, []),
    ("retrieve_knowledge", ("kb", "q"), "retrieve_knowledge",
     {"kb_id": "kb", "query_text": "q", "top_k": 5, "filters": {}}, {"results": []}, []),
    ("list_parsers", (), "list_parsers", {"mime_type": None}, {"parsers": []}, []),
    (
        "invoke_parser",
        ("a", "p", "s/x", "text/plain", "x.txt"),
        "invoke_parser",
        {"plugin_author": "a", "plugin_name": "p", "storage_path": "s/x",
         "mime_type": "text/plain", "filename": "x.txt", "metadata": {}},
        {"text": "t", "sections": [], "metadata": {}},
        {"text": "t", "sections": [], "metadata": {}},
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", PLUGIN_CALLS, ids=[row[0] for row in PLUGIN_CALLS])
async def test_plugin_api_call(case: tuple[Any, ...]) -> None:
    method, args, action, payload, answer, expected = case
    peer = HostPeer(answers={action: answer})
    async with connected(peer) as channel:
        api = LangBotAPIProxy(channel)
        assert await getattr(api, method)(*args) == expected
    assert peer.calls == [(action, payload)]


async def test_plugin_api_streams_llm_events() -> None:
    items = [
        {"chunk": {"role": "assistant", "content": "a"}},
        {"usage": {"total_tokens": 2}},
        {"chunk": {"role": "assistant", "content": "b"}, "usage": {"total_tokens": 3}},
    ]
    peer = HostPeer(streams={"invoke_llm_stream": items})
    async with connected(peer) as channel:
        api = LangBotAPIProxy(channel)
        events = [e async for e in api.invoke_llm_stream_events("m", HELLO)]
        chunks = [c.content async for c in api.invoke_llm_stream("m", HELLO, timeout=5)]
    assert [e.usage.total_tokens if e.usage else None for e in events] == [None, 2, 3]
    assert chunks == ["a", "b"]
    assert "timeout" not in peer.calls[0][1]  # as the reference, unless asked
    assert peer.calls[1][1]["timeout"] == 5


async def test_plugin_api_receives_pushed_files_and_reports_problems() -> None:
    peer = HostPeer()

    async def push(data: dict[str, Any]) -> dict[str, Any]:
        assert peer.session is not None
        return {"file_key": await peer.session.send_file(b"knowledge" * 3000, suffix="txt")}

    peer.answers = {
        "get_knowledge_file_stream": push,
        "get_bots": {"wrong": 1},
        "get_bot_info": NotFoundError("no such bot"),
    }
    async with connected(peer) as channel:
        api = LangBotAPIProxy(channel)
        assert await api.get_knowledge_file_stream("kb/doc") == b"knowledge" * 3000
        with pytest.raises(MalformedMessageError, match="lacks 'bots'"):
            await api.get_bots()
        with pytest.raises(NotFoundError, match="no such bot"):
            await api.get_bot_info("b")
    with pytest.raises(NotReadyError):
        await LangBotAPIProxy().get_bots()


QUERY_CALLS: list[tuple[str, tuple[Any, ...], str, dict[str, Any], dict[str, Any], Any]] = [
    ("reply", (MessageChain([Plain(text="r")]), True), "reply_message",
     {"message_chain": [{"type": "Plain", "text": "r"}], "quote_origin": True}, {"ok": 1},
     {"ok": 1}),
    ("get_bot_uuid", (), "get_bot_uuid", {}, {"bot_uuid": "b"}, "b"),
    ("set_query_var", ("k", [1]), "set_query_var", {"key": "k", "value": [1]}, {}, {}),
    ("get_query_var", ("k",), "get_query_var", {"key": "k"}, {"value": 3}, 3),
    ("get_query_vars", (), "get_query_vars", {}, {"vars": {"k": 3}}, {"k": 3}),
    ("create_new_conversation", (), "create_new_conversation", {}, {"ok": True}, {"ok": True}),
    ("list_pipeline_knowledge_bases", (), "list_pipeline_knowledge_bases", {},
     {"knowledge_bases": [{"uuid": "kb"}]}, [{"uuid": "kb"}]),
    ("retrieve_knowledge", ("kb", "q", 2), "retrieve_knowledge_base",
     {"kb_id": "kb", "query_text": "q", "top_k": 2, "filters": {}}, {"results": []}, []),
]  # fmt: skip


@pytest.mark.parametrize("case", QUERY_CALLS, ids=[row[0] for row in QUERY_CALLS])
async def test_query_api_call_from_both_contexts(case: tuple[Any, ...]) -> None:
    method, args, action, payload, answer, expected = case
    event_context = {
        "query_id": 7,
        "query_uuid": "q-7",
        "event_name": "PersonMessageReceived",
        "event": {
            "event_name": "PersonMessageReceived",
            "launcher_type": "person",
            "launcher_id": "u1",
            "sender_id": "u1",
            "message_event": FRIEND_MESSAGE,
            "message_chain": FRIEND_MESSAGE["message_chain"],
        },
    }
    command_context = {**CASES["command_context"][2], "query_id": 8}
    peer = HostPeer(answers={action: answer})
    async with connected(peer) as channel:
        on_event = EventContextProxy.model_validate(
            {**event_context, "plugin_runtime_handler": channel}
        )
        on_command = ExecuteContextProxy.model_validate(
            {**command_context, "plugin_runtime_handler": channel}
        )
        assert await getattr(on_event, method)(*args) == expected
        assert await getattr(on_command, method)(*args) == expected
    assert peer.calls == [
        (action, {"query_id": 7, "query_uuid": "q-7", **payload}),
        (action, {"query_id": 8, **payload}),  # no query_uuid: none was given
    ]


def test_query_proxy_dump_leaves_out_the_channel_and_a_missing_query_uuid() -> None:
    proxy = ExecuteContextProxy.model_validate(
        {**CASES["command_context"][2], "plugin_runtime_handler": object()}
    )
    dumped = proxy.model_dump()
    assert "plugin_runtime_handler" not in dumped
    assert "query_uuid" not in dumped
    assert dumped["command"] == "a"


# ---------------------------------------------------------------------- reasoning_level

FEATURES = {"version": "4.11.2", "api_features": ["llm.reasoning_level"]}
LLM_ANSWERS: dict[str, Any] = {
    "get_langbot_version": FEATURES,
    "invoke_llm": {"message": {"role": "assistant", "content": "ok"}},
    "count_tokens": {"tokens": 3},
}
LLM_STREAMS = {"invoke_llm_stream": [{"chunk": {"role": "assistant", "content": "ok"}}]}


async def _drain(call: Any) -> Any:
    if hasattr(call, "__aiter__"):
        return [item async for item in call]
    return await call


@pytest.mark.parametrize(
    "method",
    ["invoke_llm", "invoke_llm_with_usage", "invoke_llm_stream", "invoke_llm_stream_events"],
)
@pytest.mark.parametrize("level", ["plugin", "run"])
async def test_reasoning_level_is_sent_only_when_named_and_the_host_takes_it(
    method: str, level: str
) -> None:
    from langbot_plugin.api.proxies.agent_run import AgentRunAPIProxy
    from tests.api.runs import run_context

    peer = HostPeer(answers=dict(LLM_ANSWERS), streams=dict(LLM_STREAMS))
    async with connected(peer) as channel:
        api: Any = (
            LangBotAPIProxy(channel)
            if level == "plugin"
            else AgentRunAPIProxy(ctx=run_context(), plugin_runtime_handler=channel)
        )
        await _drain(getattr(api, method)("m", HELLO))
        await _drain(getattr(api, method)("m", HELLO, reasoning_level="medium"))
        await _drain(getattr(api, method)("m", HELLO, reasoning_level="provider_default"))
    model_calls = [data for action, data in peer.calls if action != "get_langbot_version"]
    assert "reasoning_level" not in model_calls[0]  # the old wire, unchanged
    assert [c.get("reasoning_level") for c in model_calls[1:]] == ["medium", "provider_default"]
    assert peer.actions().count("get_langbot_version") == 1  # asked once, before the call
    if level == "run":
        assert all(data["run_id"] == "run-1" for data in model_calls)


async def test_the_run_apis_count_tokens_takes_a_reasoning_level() -> None:
    from langbot_plugin.api.proxies.agent_run import AgentRunAPIProxy
    from tests.api.runs import run_context

    peer = HostPeer(answers=dict(LLM_ANSWERS))
    async with connected(peer) as channel:
        api = AgentRunAPIProxy(ctx=run_context(), plugin_runtime_handler=channel)
        assert await api.count_tokens("m", HELLO, reasoning_level="low") == 3
    assert peer.last("count_tokens")["reasoning_level"] == "low"


async def test_a_host_without_the_feature_refuses_a_level_before_the_model_call() -> None:
    peer = HostPeer(answers={**LLM_ANSWERS, "get_langbot_version": {"version": "4.10"}})
    async with connected(peer) as channel:
        api = LangBotAPIProxy(channel)
        with pytest.raises(RuntimeError, match="upgrade LangBot"):
            await api.invoke_llm("m", HELLO, reasoning_level="high")
        assert peer.actions() == ["get_langbot_version"]
        assert (await api.invoke_llm("m", HELLO)).content == "ok"  # without a level it works
        with pytest.raises(ValueError, match="reasoning level"):
            await api.invoke_llm("m", HELLO, reasoning_level="secret")  # type: ignore[arg-type]
    assert peer.actions() == ["get_langbot_version", "invoke_llm"]


# ---------------------------------------------------------------------- answers and streams


async def test_answers_a_little_off_their_shape_pass_through() -> None:
    peer = HostPeer(
        answers={
            "list_plugins_manifest": {"plugins": ["a/b"]},
            "list_commands": {"commands": ["cmd"]},
            "invoke_parser": {"text": "parsed"},
            "list_tools": {"no_tools": []},
        }
    )
    async with connected(peer) as channel:
        api = LangBotAPIProxy(channel)
        assert await api.list_plugins_manifest() == ["a/b"]  # type: ignore[comparison-overlap]
        assert await api.list_commands() == ["cmd"]  # type: ignore[comparison-overlap]
        # the host's answer as it came: no keys added
        assert await api.invoke_parser("a", "p", "s", "text/plain", "x.txt") == {"text": "parsed"}
        with pytest.raises(MalformedMessageError, match="tools"):
            await api.list_tools()  # without the list at all it is malformed
