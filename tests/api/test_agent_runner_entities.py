"""Agent-runner entities: context tolerance, results, manifests, streaming helper."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import ValidationError

from langbot_plugin.api.entities.builtin import agent_runner as ar
from langbot_plugin.api.entities.builtin.agent_runner.manifest import RunnerManifest
from langbot_plugin.api.entities.builtin.provider.message import (
    ContentElement,
    LLMTokenUsage,
    Message,
    MessageChunk,
)
from tests.fixtures.reference.cases import INTERACTION, RUN_CONTEXT

pytestmark = pytest.mark.anyio


def test_the_context_keeps_what_a_newer_host_adds_at_every_level() -> None:
    data = copy.deepcopy(RUN_CONTEXT)
    data["variables"] = {"x": 1}
    data["trigger"]["source"] = "calendar"  # a source this SDK does not know
    data["input"]["attachments"] = [{"type": "file", "ref": "att-1"}]
    data["resources"]["models"][0]["operations"] = ["invoke", "embed"]
    data["resources"]["models"][0]["quota"] = 5
    data["delivery"]["automatic_reply"] = True
    data["context"] = {"available_apis": {"state": True, "box": True}, "window": 3}
    ctx = ar.AgentRunContext.model_validate(data)
    assert ctx.variables == {"x": 1}
    assert ctx.trigger.source == "calendar"
    assert ctx.input.attachments[0].ref == "att-1"
    assert ctx.resources.models[0].operations == ["invoke", "embed"]
    assert ctx.context.available_apis.allows("box")
    assert not ctx.context.available_apis.allows("run_claim")
    dumped = ctx.model_dump(mode="json")
    assert dumped["variables"] == {"x": 1}
    assert dumped["resources"]["models"][0]["quota"] == 5
    assert dumped["context"]["window"] == 3
    assert ar.AgentRunContext.model_validate(dumped) == ctx


def test_input_to_text() -> None:
    assert ar.AgentInput(text="t", contents=[ContentElement.from_text("x")]).to_text() == "t"
    contents = [
        ContentElement.from_text("a"),
        ContentElement.from_image_url("http://i"),
        ContentElement.from_text("b"),
    ]
    assert ar.AgentInput(contents=contents).to_text() == "a b"
    assert ar.AgentInput().to_text() == ""


def test_result_types_known_and_unknown() -> None:
    known = ar.AgentRunResult.model_validate({"run_id": "r", "type": "run.failed"})
    assert known.type is ar.AgentRunResultType.RUN_FAILED
    assert known.is_terminal
    log = ar.AgentRunResult.model_validate({"run_id": "r", "type": "processor.log"})
    assert log.type is ar.AgentRunResultType.PROCESSOR_LOG
    future = ar.AgentRunResult.model_validate({"run_id": "r", "type": "trace.span", "data": {}})
    assert future.type == "trace.span"
    assert not future.is_terminal
    assert future.model_dump(mode="json")["type"] == "trace.span"


def test_factories_produce_the_documented_payloads() -> None:
    delta = ar.AgentRunResult.message_delta("r", MessageChunk(role="assistant", content="so far"))
    assert delta.type == "message.delta"
    assert delta.data["chunk"]["content"] == "so far"
    done = ar.AgentRunResult.run_completed("r", Message(role="assistant", content="x"))
    assert done.data == {"finish_reason": "stop", "message": {"role": "assistant", "content": "x"}}
    assert ar.AgentRunResult.run_completed("r").data == {"finish_reason": "stop"}
    failed = ar.AgentRunResult.run_failed("r", "boom", usage={"total_tokens": 3, "cache": 1})
    assert failed.data == {"error": "boom", "code": "runner.error", "retryable": False}
    assert failed.usage == LLMTokenUsage(total_tokens=3, cache=1)  # type: ignore[call-arg]
    state = ar.AgentRunResult.state_updated("r", "k", [1], scope="actor", sequence=4)
    assert (state.data, state.sequence) == ({"scope": "actor", "key": "k", "value": [1]}, 4)
    started = ar.AgentRunResult.tool_call_started("r", "c", "t", {"a": 1})
    assert started.data == {"tool_call_id": "c", "tool_name": "t", "parameters": {"a": 1}}
    completed = ar.AgentRunResult.tool_call_completed("r", "c", "t", error="bad")
    assert completed.data == {"tool_call_id": "c", "tool_name": "t", "result": None, "error": "bad"}
    action = ar.AgentRunResult.action_requested("r", "message.react", payload={"e": "+1"})
    assert action.data == {"action": "message.react", "target": None, "payload": {"e": "+1"}}
    asked = ar.AgentRunResult.interaction_requested("r", INTERACTION)
    assert asked.type == "action.requested"
    assert asked.data["action"] == ar.INTERACTION_REQUESTED_ACTION
    assert asked.data["payload"]["fields"][0]["options"] == [
        {"value": "a", "label": "A", "description": None}
    ]


def test_factories_validate_their_input() -> None:
    with pytest.raises(ValueError, match="Invalid scope 'session'"):
        ar.AgentRunResult.state_updated("r", "k", 1, scope="session")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        ar.AgentRunResult.interaction_requested("r", {**INTERACTION, "colour": "red"})
    with pytest.raises(ValidationError):
        ar.AgentRunResult.interaction_requested("r", {**INTERACTION, "fallback_text": ""})


def test_manifests_are_strict_where_authors_write_them() -> None:
    with pytest.raises(ValidationError):
        ar.AgentRunnerCapabilities.model_validate({"streaming": True, "telepathy": True})
    with pytest.raises(ValidationError):
        ar.AgentRunnerPermissions.model_validate({"models": ["fly"]})
    manifest = ar.AgentRunnerManifest(id="plugin:a/b/c", name="c", label={"en_US": "C"})
    assert manifest.permissions.models == []
    with pytest.raises(ValidationError):
        RunnerManifest(id="plugin:a/b/c", name="c", label={"en_US": "C"}, usages=[])
    runner = RunnerManifest(id="plugin:a/b/c", name="c", label={"en_US": "C"}, usages=["agent"])
    assert runner.model_dump()["component_kind"] == "Runner"
    assert runner.supported_event_patterns == ["*"]


def test_api_errors_carry_their_code() -> None:
    error = ar.PermissionDeniedError.of("permission_denied.api", "nope", details={"api": "x"})
    assert isinstance(error, ar.AgentAPIException)
    assert (error.code, error.retryable, error.details, str(error)) == (
        "permission_denied.api",
        False,
        {"api": "x"},
        "nope",
    )
    assert error.error == ar.AgentAPIError(
        code="permission_denied.api", message="nope", details={"api": "x"}
    )


def test_cumulative_text_turns_increments_into_the_answer_so_far() -> None:
    text = ar.CumulativeText()
    first = text.chunk(MessageChunk(role="assistant", content="Hel", resp_message_id="m"))
    second = text.chunk(
        MessageChunk(role="assistant", content=[ContentElement.from_text("lo")], is_final=True)
    )
    assert (first.content, first.resp_message_id, first.msg_sequence) == ("Hel", "m", 1)
    assert (second.content, second.is_final, second.msg_sequence) == ("Hello", True, 2)
    assert text.chunk(" world").content == "Hello world"
    assert text.message() == Message(role="assistant", content="Hello world")
    text.reset()
    assert text.chunk("new").content == "new"


async def test_cumulative_deltas() -> None:
    async def chunks() -> AsyncIterator[MessageChunk]:
        for piece in ("a", "", "b", "c"):
            yield MessageChunk(role="assistant", content=piece)

    results = [result async for result in ar.cumulative_deltas("r", chunks())]
    assert [r.data["chunk"]["content"] for r in results] == ["a", "ab", "abc"]
    assert {r.type for r in results} == {ar.AgentRunResultType.MESSAGE_DELTA}


def test_host_answers_ignore_unknown_fields() -> None:
    run: dict[str, Any] = {"run_id": "r", "status": "paused", "galaxy": 1}
    parsed = ar.AgentRun.model_validate(run)
    assert parsed.status == "paused"
    assert "galaxy" not in parsed.model_dump()
    assert ar.AgentRun.model_validate({"run_id": "r", "status": "running"}).status == (
        ar.AgentRunStatus.RUNNING
    )


def test_the_07_names_alias_the_05_classes() -> None:
    from langbot_plugin.api.entities.builtin import runner

    assert runner.RunnerContext is ar.AgentRunContext
    assert runner.RunnerResult is ar.AgentRunResult
    assert runner.RunnerResultType is ar.AgentRunResultType
    assert runner.RunnerManifest is RunnerManifest
    assert set(ar.__all__) < set(runner.__all__)
    assert all(hasattr(runner, name) for name in runner.__all__)
