"""Real payloads captured between the LangBot 4.11.2 host and the reference runtime
validate with our models and dump back equivalently (see ``helpers.dump_differences``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from langbot_plugin.api.entities.builtin.agent_runner import AgentRunContext, AgentRunResult
from langbot_plugin.api.entities.builtin.command.context import CommandReturn, ExecuteContext
from langbot_plugin.api.entities.builtin.provider.message import LLMInvokeResult, Message
from langbot_plugin.api.entities.context import EventContext
from langbot_plugin.api.proxies.event_context import EventContextProxy
from langbot_plugin.api.proxies.execute_context import ExecuteContextProxy
from tests.api.helpers import as_json, captured, dump_differences

RECORDS = captured()


Pick = Callable[[str | None, dict[str, Any]], dict[str, Any] | None]

#: What to take from a captured message, given its action (None for answers) and data.
PICKS: dict[str, Pick] = {
    "event_context": lambda action, data: _dict(data.get("event_context")),
    "command_context": lambda action, data: _dict(data.get("command_context")),
    "runner_context": lambda action, data: data["context"] if action == "run_runner" else None,
    "run_result": lambda action, data: data if {"run_id", "type"} <= data.keys() else None,
    "command_return": lambda action, data: (
        data if {"error", "image_url"} <= data.keys() else _dict(data.get("command_response"))
    ),
    "llm_request": lambda action, data: data if action == "invoke_llm" else None,
    "llm_answer": lambda action, data: data if {"message", "usage"} <= data.keys() else None,
}


def _dict(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _payloads(select: str) -> list[dict[str, Any]]:
    pick = PICKS[select]
    found = [
        payload
        for record in RECORDS
        if (payload := pick(record["msg"].get("action"), record["msg"].get("data") or {}))
    ]
    assert found, f"the captures hold no {select}"
    return found


def _round_trip(model: type[BaseModel], payload: dict[str, Any]) -> None:
    parsed = model.model_validate(payload)
    for mode in ("python", "json"):
        dumped = as_json(parsed.model_dump(mode=mode))
        assert dump_differences(dumped, payload) == [], mode
    assert model.model_validate(parsed.model_dump()).model_dump() == parsed.model_dump()


@pytest.mark.parametrize("payload", _payloads("event_context"))
def test_event_contexts(payload: dict[str, Any]) -> None:
    _round_trip(EventContext, payload)


@pytest.mark.parametrize("payload", _payloads("command_context"))
def test_command_contexts(payload: dict[str, Any]) -> None:
    _round_trip(ExecuteContext, payload)


@pytest.mark.parametrize("payload", _payloads("runner_context"))
def test_runner_contexts(payload: dict[str, Any]) -> None:
    _round_trip(AgentRunContext, payload)
    ctx = AgentRunContext.model_validate(payload)
    # What the 0.7 host adds is read into the one model (and unknown keys are kept).
    assert ctx.variables == payload["variables"]
    assert ctx.context.available_apis.allows("box") is payload["context"]["available_apis"]["box"]
    assert ctx.delivery.automatic_reply is payload["delivery"]["automatic_reply"]
    assert ctx.input.to_text() == payload["input"]["text"]


@pytest.mark.parametrize("payload", _payloads("run_result"))
def test_run_results_dump_exactly(payload: dict[str, Any]) -> None:
    result = AgentRunResult.model_validate(payload)
    assert result.model_dump(mode="json") == payload


@pytest.mark.parametrize("payload", _payloads("command_return"))
def test_command_returns_dump_exactly(payload: dict[str, Any]) -> None:
    assert CommandReturn.model_validate(payload).model_dump(mode="json") == payload


@pytest.mark.parametrize("payload", _payloads("llm_request"))
def test_llm_requests(payload: dict[str, Any]) -> None:
    for raw in payload["messages"]:
        assert Message.model_validate(raw).model_dump() == raw


@pytest.mark.parametrize("payload", _payloads("llm_answer"))
def test_llm_answers(payload: dict[str, Any]) -> None:
    result = LLMInvokeResult.model_validate(payload)
    assert dump_differences(as_json(result.model_dump()), payload) == []


def test_proxies_build_from_captured_contexts() -> None:
    channel = object()
    event_context = _payloads("event_context")[0]
    proxy = EventContextProxy.model_validate({**event_context, "plugin_runtime_handler": channel})
    assert proxy.plugin_runtime_handler is channel
    assert "plugin_runtime_handler" not in proxy.model_dump()
    assert dump_differences(as_json(proxy.model_dump()), event_context) == []

    command_context = _payloads("command_context")[0]
    command = ExecuteContextProxy.model_validate(
        {**command_context, "plugin_runtime_handler": channel}
    )
    assert command.crt_params == command_context["crt_params"]
    assert dump_differences(as_json(command.model_dump()), command_context) == []
