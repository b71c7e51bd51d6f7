"""Seed 003's PROTOCOL_V1 section 7 samples, run as written by a runner in a real
plugin runtime and worker against our host library (issue 23): each call is answered
through the same actions and grants as its flat twin, or refused with one of Protocol
v1's seven codes (our finer code kept in ``details.code``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from langbot_plugin.host import HostTool
from langbot_plugin.host.run_context import DEFAULT_APIS
from langbot_plugin.testing import PluginHarness, ScriptedLLM

pytestmark = pytest.mark.anyio

PLUGIN = Path(__file__).resolve().parents[1] / "fixtures" / "plugins" / "seedapi"

EXPECTED: dict[str, Any] = {
    "models.invoke": "answer",
    "models.stream": ["answer"],
    "models.rerank": {"code": "not_found", "finer": "not_supported"},
    "tools.get_detail": "echo",
    "tools.call": {"echo": "hi"},
    "knowledge.retrieve": {"code": "unauthorized", "finer": "permission_denied.resource"},
    "history.page": ["what now?"],
    "history.search": [],
    "events.get": True,
    "events.page": 1,
    "artifacts.metadata": {"code": "not_found", "finer": "not_found"},
    "artifacts.read_range": {"code": "not_found", "finer": "not_found"},
    "artifacts.open_stream": {"code": "not_found", "finer": "not_found"},
    "state": ["abc", None],
    "storage": ["abc", ["external.session_id"], []],
    "storage.binding": [[], "abc"],
    "storage.typo": {"code": "invalid_argument", "finer": "invalid_argument"},
    "platform.request_action": {"code": "not_found", "finer": "not_supported"},
}


def _echo(parameters: dict[str, Any]) -> dict[str, Any]:
    return {"echo": parameters.get("text")}


async def _samples(
    *, process: bool, traced: bool, create: str | None = None
) -> tuple[dict[str, Any], list[str]]:
    llm = ScriptedLLM(["answer", "answer"])
    tool = HostTool("echo", _echo, description="echoes")
    async with PluginHarness(PLUGIN, llm=llm, tools=[tool], process=process) as h:
        if create is not None:
            made = await h.run_agent("make it", runner="samples", config={"create": create})
            assert made.text == "created", made.error
            assert made.types == ["artifact.created", "run.completed"]
        reply = await h.run_agent("what now?", runner="samples", config={"traced": traced})
    assert reply.ok, reply.error
    return json.loads(reply.text or "{}"), reply.types


@pytest.mark.parametrize("traced", [False, True], ids=["get_run_api", "ctx.api"])
async def test_every_sample_is_answered_or_refused_with_its_code(traced: bool) -> None:
    outcomes, types = await _samples(process=False, traced=traced)
    assert outcomes == EXPECTED
    # ctx.api's namespaces go through its traced methods: the tool call is reported
    traced_calls = types.count("tool.call.started")
    assert traced_calls == (2 if traced else 0)  # tools.call and platform.request_action


async def test_the_samples_in_a_real_runtime_process() -> None:
    outcomes, _ = await _samples(process=True, traced=False)
    assert outcomes == EXPECTED


async def test_an_artifact_a_run_created_is_read_by_the_next() -> None:
    outcomes, _ = await _samples(process=True, traced=False, create="0123456789")
    assert outcomes["artifacts.metadata"] == ["file", "text/plain", "notes.txt", 10]
    assert outcomes["artifacts.read_range"] == "2345"
    assert outcomes["artifacts.open_stream"] == "0123456789"
    # the history holds both user turns and the first run's answer
    assert outcomes["history.page"] == ["what now?", "created", "make it"]


async def test_capabilities_declared_in_code_are_listed_and_the_bridge_serves() -> None:
    async with PluginHarness(PLUGIN, llm=ScriptedLLM(["x"]), process=True) as h:
        listing = await h.client.list_runners(h.connection.scope)
        reply = await h.run_agent("hi", runner="declared")
    (entry,) = [e for e in listing if e["runner_name"] == "declared"]
    assert entry["manifest"]["capabilities"]["streaming"] is True
    assert entry["manifest"]["permissions"]["models"] == ["invoke"]
    assert entry["manifest"]["permissions"]["storage"] == []  # 'binding': not the released host's
    declared = entry["protocol_v1"]
    assert declared["capabilities"]["platform_api"] is True
    assert declared["permissions"]["storage"] == ["binding"]
    assert reply.ok, reply.error
    served, *tools = (reply.text or "").split()
    assert served == "True"
    assert "langbot_get_current_event" in tools


async def test_without_the_artifact_flags_the_run_is_refused_unauthorized() -> None:
    released = [flag for flag in DEFAULT_APIS if not flag.startswith("artifact_")]
    async with PluginHarness(PLUGIN, llm=ScriptedLLM(["a"])) as h:
        reply = await h.run_agent("hi", runner="samples", available_apis=released)
    outcomes = json.loads(reply.text or "{}")
    refused = {"code": "unauthorized", "finer": "permission_denied.api"}
    assert outcomes["artifacts.metadata"] == refused
    assert outcomes["artifacts.open_stream"] == refused
