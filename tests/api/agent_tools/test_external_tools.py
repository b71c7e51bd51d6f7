"""The run's tool surface: listed by its grants, and every call through the run API."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from langbot_plugin.api.agent_tools import AgentRunExternalTools, agent_tool
from langbot_plugin.api.agent_tools.external_tools import BUILTIN_TOOL_NAMES
from tests.api.agent_tools.helpers import running
from tests.api.runs import ALL_APIS, run_context

pytestmark = pytest.mark.anyio

EVERYTHING = {
    "langbot_list_assets",
    "langbot_get_current_event",
    "langbot_history_page",
    "langbot_retrieve_knowledge",
    "langbot_get_tool_detail",
    "langbot_call_tool",
}
BOX_TOOLS = {
    "langbot_get_box_status",
    "langbot_list_boxes",
    "langbot_acquire_box",
    "langbot_bind_box",
    "langbot_import_box_attachments",
    "langbot_export_box_files",
}


def names(tools: AgentRunExternalTools) -> set[str]:
    return {tool["name"] for tool in tools.mcp_tools()}


async def test_a_run_granted_everything_sees_every_tool() -> None:
    ctx = run_context(
        tools=[
            {"tool_name": "t", "operations": ["detail", "call"]},
            {"tool_name": "event_reply", "operations": ["call"]},
        ],
        apis=[*ALL_APIS, "box"],
    )
    async with running(ctx) as run:
        tools = run.tools()
        assert names(tools) == EVERYTHING | BOX_TOOLS | {"langbot_reply_files"}
        assert names(tools) == BUILTIN_TOOL_NAMES
        listed = {tool["name"]: tool for tool in tools.mcp_tools()}
        assert listed["langbot_get_current_event"]["annotations"] == {"readOnlyHint": True}
        assert "annotations" not in listed["langbot_call_tool"]
        assert listed["langbot_call_tool"]["inputSchema"]["required"] == ["tool_name"]


async def test_tools_follow_the_grants() -> None:
    ctx = run_context(
        tools=[{"tool_name": "t", "operations": ["detail"]}],
        knowledge_bases=[{"kb_id": "kb", "operations": ["list"]}],
        apis=[],
    )
    async with running(ctx) as run:
        tools = run.tools()
        assert names(tools) == {
            "langbot_list_assets",
            "langbot_get_current_event",
            "langbot_get_tool_detail",
        }
        every = {t["name"] for t in tools.mcp_tools(include_unavailable=True)}
        assert every == BUILTIN_TOOL_NAMES
        refused = await tools.call_mcp_tool("langbot_call_tool", {"tool_name": "t"})
        assert refused["isError"] is True
        assert refused["structuredContent"]["error"]["code"] == "not_found"
        assert run.peer.calls == []


async def test_empty_operations_grant_the_kinds_defaults_to_listed_resources_only() -> None:
    # as the released host's _resource_operations: an empty list is the kind's defaults
    ctx = run_context(
        tools=[{"tool_name": "t", "operations": []}],
        knowledge_bases=[{"kb_id": "kb", "operations": []}],
    )
    async with running(ctx) as run:
        tools = run.tools()
        granted = names(tools)
        assert {"langbot_call_tool", "langbot_get_tool_detail"} <= granted
        assert "langbot_retrieve_knowledge" in granted
        other = await tools.call_mcp_tool("langbot_call_tool", {"tool_name": "not-listed"})
        assert other["structuredContent"]["error"]["code"] == "permission_denied.resource"
        assert run.peer.calls == []
        called = await tools.call_mcp_tool("langbot_call_tool", {"tool_name": "t"})
        assert not called.get("isError")
    assert run.peer.actions() == ["call_tool"]


async def test_calls_go_through_the_run_api_with_the_run_id() -> None:
    async with running() as run:
        tools = run.tools()
        called = await tools.call_mcp_tool(
            "langbot_call_tool", {"tool_name": "t", "parameters": {"q": 1}}
        )
        assert called["structuredContent"] == {"echo": {"q": 1}}
        assert called["content"][0]["text"] == '{"echo": {"q": 1}}'
        detail = await tools.call_mcp_tool("langbot_get_tool_detail", {"tool_name": "t"})
        assert detail["structuredContent"]["name"] == "t"
        found = await tools.call_mcp_tool(
            "langbot_retrieve_knowledge", {"kb_id": "kb", "query": "hello", "top_k": 2}
        )
        assert found["structuredContent"] == {
            "result": [{"id": "doc", "content": [], "metadata": {}}]
        }
        page = await tools.call_mcp_tool("langbot_history_page", {"limit": 5})
        assert page["structuredContent"]["has_more"] is False
    assert run.peer.actions() == [
        "call_tool",
        "get_tool_detail",
        "retrieve_knowledge_base",
        "history_page",
    ]
    assert all(data["run_id"] == "run-1" for _, data in run.peer.calls)
    assert run.peer.last("retrieve_knowledge_base")["query_text"] == "hello"
    assert run.peer.last("history_page")["limit"] == 5


async def test_the_run_api_refusals_come_back_with_their_codes() -> None:
    async with running() as run:
        tools = run.tools()
        other = await tools.call_mcp_tool("langbot_call_tool", {"tool_name": "not-granted"})
        assert other["isError"] is True
        assert other["structuredContent"]["error"]["code"] == "permission_denied.resource"
        kb = await tools.call_mcp_tool("langbot_retrieve_knowledge", {"kb_id": "x", "query": "q"})
        assert kb["structuredContent"]["error"]["code"] == "permission_denied.resource"
        empty = await tools.call_mcp_tool("langbot_retrieve_knowledge", {"kb_id": "kb"})
        assert empty["structuredContent"]["error"]["code"] == "invalid_argument"
        extra = await tools.call_mcp_tool("langbot_call_tool", {"tool_name": "t", "x": 1})
        assert extra["structuredContent"]["error"]["code"] == "invalid_argument"
        assert "x" in extra["content"][0]["text"]
        with pytest.raises(ValueError, match="Unknown LangBot external tool"):  # reference words
            await tools.call_tool("no_such_tool")
    assert run.peer.calls == []


async def test_list_assets_and_the_current_event_describe_the_run() -> None:
    ctx = run_context(tools=[{"tool_name": "t", "operations": ["detail"]}])
    async with running(ctx) as run:
        tools = run.tools()
        assets = await tools.call_tool(
            "langbot_list_assets", {"asset_types": ["tools", "mcp_tools"], "include_schemas": True}
        )
        assert assets["asset_types"] == ["mcp_tools", "tools"]
        assert assets["tools"] == [
            {"tool_name": "t", "type": None, "description": None, "operations": ["detail"]}
        ]
        assert {"tool_name", "description", "schema"} <= set(assets["mcp_tools"][0])
        everything = await tools.call_tool("langbot_list_assets", {})
        assert everything["knowledge_bases"][0]["operations"] == ["list", "retrieve"]
        assert everything["history"]["available"] is True
        event = await tools.call_tool("langbot_get_current_event", {})
        assert event["run_id"] == "run-1"
        assert event["input"]["text"] == "hi"
        assert event["conversation"]["conversation_id"] == "c-1"
    assert run.peer.calls == []


class _AskArgs(BaseModel):
    question: str


class WithQuestions(AgentRunExternalTools):
    """A runner's own tool next to the built-in ones."""

    @agent_tool(name="ask_user_question", description="Ask the user", args_model=_AskArgs)
    async def ask(self, args: _AskArgs) -> dict[str, Any]:
        return {"asked": args.question}


async def test_subclass_tools_are_listed_and_callable() -> None:
    async with running(run_context(tools=[], knowledge_bases=[], apis=[])) as run:
        tools = WithQuestions(run.api, run.ctx)
        assert names(tools) == {
            "ask_user_question",
            "langbot_list_assets",
            "langbot_get_current_event",
        }
        assert await tools.call_tool("ask_user_question", {"question": "why?"}) == {"asked": "why?"}


class Broken(AgentRunExternalTools):
    @agent_tool(name="broken", description="Always fails", args_model=_AskArgs)
    async def broken(self, args: _AskArgs) -> None:
        raise KeyError(args.question)


async def test_a_tool_that_crashes_answers_an_error_result() -> None:
    async with running() as run:
        result = await Broken(run.api, run.ctx).call_mcp_tool("broken", {"question": "q"})
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "runtime_error"
    assert "KeyError" in result["content"][0]["text"]


async def test_box_tools_are_the_run_apis_calls() -> None:
    ctx = run_context(apis=[*ALL_APIS, "box"])
    answers = {
        "acquire_box": {"id": "b1", "status": "ready"},
        "bind_box": {"box_id": "b1", "outbox": "/workspace/outbox/run-1"},
    }
    async with running(ctx, answers=answers) as run:
        tools = run.tools()
        assert "langbot_reply_files" not in names(tools)  # no event_reply tool granted
        acquired = await tools.call_mcp_tool("langbot_acquire_box", {"reuse_key": "k"})
        bound = await tools.call_mcp_tool("langbot_bind_box", {"box_id": "b1"})
        assert "isError" not in acquired
        assert acquired["structuredContent"] == {"id": "b1", "status": "ready"}
        assert bound["structuredContent"] == {"box_id": "b1", "outbox": "/workspace/outbox/run-1"}
    sent = [
        (action, data.get("reuse_key") or data.get("box_id")) for action, data in run.peer.calls
    ]
    assert sent == [("acquire_box", "k"), ("bind_box", "b1")]


async def test_platform_tools_are_listed_apart_as_the_reference_lists_them() -> None:
    ctx = run_context(
        tools=[
            {"tool_name": "t", "operations": ["call"]},
            {
                "tool_name": "event_reply",
                "tool_type": "platform",
                "description": "Reply to the current event",
                "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
            },
        ]
    )
    async with running(ctx) as run:
        tools = run.tools()
        assets = await tools.call_tool(
            "langbot_list_assets",
            {"asset_types": ["tools", "platform_tools"], "include_schemas": True},
        )
    assert [t["tool_name"] for t in assets["tools"]] == ["t"]
    assert assets["platform_tools"] == [
        {
            "tool_name": "event_reply",
            "description": "Reply to the current event",
            "operations": ["call", "detail"],  # empty: the kind's defaults
            "schema": {"type": "object", "properties": {"text": {"type": "string"}}},
        }
    ]


class StandInAPI:
    """A run API of a plugin author's test (a mock answers any attribute, so a value
    that is not the SDK's grants must not count as one)."""

    def granted_operations(self, kind: str, resource_id: str) -> object:
        return object()

    def api_available(self, name: str) -> object:
        return object()

    async def reply_files(self, file_ids: list[str]) -> Any:
        return {"called": "reply_files", "file_ids": file_ids}


async def test_a_stand_in_api_lists_what_the_context_grants() -> None:
    ctx = run_context(tools=[{"tool_name": "event_reply", "tool_type": "platform"}], apis=["box"])
    tools = AgentRunExternalTools(StandInAPI(), ctx)  # type: ignore[arg-type]
    names = {tool["name"] for tool in tools.mcp_tools()}
    assert {"langbot_reply_files", "langbot_call_tool", "langbot_bind_box"} <= names
    assert "langbot_history_page" not in names  # not in available_apis
    assert await tools.call_tool("langbot_reply_files", {"file_ids": ["f"]}) == {
        "called": "reply_files",
        "file_ids": ["f"],
    }
