"""The reference's test seam: API proxies built over a handler with ``call_action`` /
``call_action_generator`` (what plugin authors' own tests pass, and the reference's
tests do), instead of an RPC session."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest

from langbot_plugin.api.entities.builtin.agent_runner import AgentAPIException
from langbot_plugin.api.entities.builtin.platform.message import MessageChain, Plain
from langbot_plugin.api.entities.builtin.provider.message import Message
from langbot_plugin.api.proxies import LangBotAPIProxy
from langbot_plugin.api.proxies.agent_run import AgentRunAPIProxy
from langbot_plugin.api.proxies.execute_context import ExecuteContextProxy
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as Action
from langbot_plugin.entities.io.errors import ActionCallError
from langbot_plugin.rpc.errors import RemoteError
from tests.api.runs import run_context
from tests.fixtures.reference.cases import CASES

pytestmark = pytest.mark.anyio


class FakeHandler:
    """A plugin author's stand-in for the runtime, as the reference's tests write it."""

    def __init__(self, answers: dict[Any, Any] | None = None) -> None:
        self.answers = answers or {}
        self.calls: list[tuple[Any, dict[str, Any], float | None]] = []
        self.files = {"key-1": b"file bytes"}
        self.deleted: list[str] = []
        self.closed: list[Any] = []

    async def call_action(self, action: Any, data: dict[str, Any], timeout: Any = None) -> Any:
        self.calls.append((action, data, timeout))
        answer = self.answers.get(action, {})
        if isinstance(answer, BaseException):
            raise answer
        return answer

    async def call_action_generator(
        self, action: Any, data: dict[str, Any], timeout: Any = None
    ) -> AsyncGenerator[Any]:
        self.calls.append((action, data, timeout))
        try:
            for item in self.answers.get(action, []):
                yield item
        finally:
            self.closed.append(action)

    async def read_local_file(self, key: str) -> bytes:
        return self.files[key]

    async def delete_local_file(self, key: str) -> None:
        self.deleted.append(key)


async def test_the_plugin_api_calls_the_handler_with_the_reference_enums_and_waits() -> None:
    handler = FakeHandler(
        {
            Action.GET_BOT_INFO: {"bot": {"uuid": "b"}},
            Action.INVOKE_LLM: {"message": {"role": "assistant", "content": "ok"}},
            Action.CALL_TOOL: {"tool_response": {"ok": True}},
            Action.GET_KNOWLEDEGE_FILE_STREAM: {"file_key": "key-1"},
        }
    )
    api = LangBotAPIProxy(handler)  # type: ignore[arg-type]
    assert await api.get_bot_info("b") == {"uuid": "b"}
    await api.send_message("b", "person", "u", MessageChain([Plain(text="hi")]))
    reply = await api.invoke_llm("m", [Message(role="user", content="hi")])
    assert reply.content == "ok"
    assert await api.call_tool("t", {"q": 1}, {"s": 1}, 7) == {"ok": True}
    assert await api.get_knowledge_file_stream("kb/doc") == b"file bytes"
    assert handler.deleted == ["key-1"]
    actions = [action for action, _, _ in handler.calls]
    assert actions == [
        Action.GET_BOT_INFO,
        Action.SEND_MESSAGE,
        Action.INVOKE_LLM,
        Action.CALL_TOOL,
        Action.GET_KNOWLEDGE_FILE_STREAM,
    ]
    waits = [timeout for _, _, timeout in handler.calls]
    # no wait where the reference names none; its own waits where it does
    assert waits == [None, None, 120.0, 180.0, None]
    assert handler.calls[1][1]["message_chain"] == [{"type": "Plain", "text": "hi"}]


@pytest.mark.parametrize("method", ["invoke_llm_stream", "invoke_llm_stream_events"])
@pytest.mark.parametrize("level", ["plugin", "run"])
async def test_closing_a_stream_closes_the_handlers_generator_at_once(
    method: str, level: str
) -> None:
    chunk = {"chunk": {"role": "assistant", "content": "a"}}
    handler = FakeHandler({Action.INVOKE_LLM_STREAM: [chunk, chunk, chunk]})
    api: Any = (
        LangBotAPIProxy(handler)  # type: ignore[arg-type]
        if level == "plugin"
        else AgentRunAPIProxy(ctx=run_context(), plugin_runtime_handler=handler)  # type: ignore[arg-type]
    )
    stream = getattr(api, method)("m", [])
    await anext(stream)
    await stream.aclose()
    assert handler.closed == [Action.INVOKE_LLM_STREAM]  # at once, not when collected


async def test_the_run_api_over_a_handler_keeps_its_checks_and_maps_its_errors() -> None:
    refused = ActionCallError(
        "access denied",
        {"error": {"code": "history.unauthorized", "message": "no", "details": {"c": 1}}},
    )
    handler = FakeHandler(
        {
            Action.RETRIEVE_KNOWLEDGE_BASE: refused,
            Action.CALL_TOOL: {"result": 3},
        }
    )
    api = AgentRunAPIProxy(ctx=run_context(), plugin_runtime_handler=handler)  # type: ignore[arg-type]
    assert await api.call_tool("t", {}) == 3
    assert handler.calls[0][1]["run_id"] == "run-1"
    assert handler.calls[0][2] == pytest.approx(180.0, abs=1.0)  # cut to the deadline
    with pytest.raises(AgentAPIException) as caught:
        await api.retrieve_knowledge("kb", "q")
    assert (caught.value.code, caught.value.details["c"]) == ("history.unauthorized", 1)
    assert handler.calls[1][2] == pytest.approx(30.0, abs=1.0)  # the reference's wait
    with pytest.raises(AgentAPIException) as denied:
        await api.call_tool("not-granted", {})
    assert denied.value.code == "permission_denied.resource"
    assert len(handler.calls) == 2  # the refusal sent nothing
    handler.answers[Action.CALL_TOOL] = {"unexpected": "shape"}
    with pytest.raises(AgentAPIException) as malformed:
        await api.call_tool("t", {})
    assert malformed.value.code == "host.malformed_response"
    assert malformed.value.details["missing_key"] == "result"


async def test_the_query_api_over_a_handler() -> None:
    handler = FakeHandler({Action.GET_QUERY_VAR: {"value": 3}})
    proxy = ExecuteContextProxy.model_validate(
        {**CASES["command_context"][2], "query_id": 7, "plugin_runtime_handler": handler}
    )
    assert await proxy.get_query_var("k") == 3
    await proxy.reply(MessageChain([Plain(text="r")]))
    assert [(a, t) for a, _, t in handler.calls] == [
        (Action.GET_QUERY_VAR, None),
        (Action.REPLY_MESSAGE, 180.0),
    ]


def test_the_reference_error_class_is_one_of_ours() -> None:
    error = ActionCallError("over quota", {"code": "quota", "message": "over quota"})
    assert isinstance(error, RemoteError)
    assert (error.remote_code, str(error), error.data["code"]) == ("quota", "over quota", "quota")
    plain = ActionCallError("boom")
    assert (plain.remote_code, plain.data) == ("", {})
