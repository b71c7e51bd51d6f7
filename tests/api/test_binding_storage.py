"""The ``binding`` storage area of Protocol v1 (issue 23): a runner that declares
``permissions.storage: [binding]`` keeps bytes per bot/pipeline binding through
``api.storage.*("binding", ...)``, in a real runtime and worker, against our host
library; without the declaration, or under a host that does not grant it (LangBot
4.11.2 never does), the call is refused ``unauthorized`` before anything is sent. The
host's own checks are tests/host/test_binding_storage.py; the runtime's,
tests/runtime/test_run_authorization.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from langbot_plugin.api.entities.builtin.agent_runner.context import AgentRunContext
from langbot_plugin.api.entities.builtin.agent_runner.errors import AgentAPIException
from langbot_plugin.api.proxies.agent_run import AgentRunAPIProxy
from langbot_plugin.host import HostTool, LocalHost
from langbot_plugin.host.run_context import make_resources
from langbot_plugin.rpc import RPCSession
from langbot_plugin.rpc.transport_memory import memory_pair
from langbot_plugin.testing import PluginHarness, ScriptedLLM
from tests.support.as_plugin import AsPlugin

pytestmark = pytest.mark.anyio

PLUGIN = Path(__file__).resolve().parents[1] / "fixtures" / "plugins" / "seedapi"
REFUSED = {"code": "unauthorized", "finer": "permission_denied.storage"}
REFUSED_CODES = ("unauthorized", "permission_denied.storage")


def _harness(*, process: bool) -> PluginHarness:
    tool = HostTool("echo", lambda p: {"echo": p.get("text")}, description="echoes")
    return PluginHarness(
        PLUGIN, llm=ScriptedLLM(["a" for _ in range(12)]), tools=[tool], process=process
    )


async def _binding(h: PluginHarness, **options: Any) -> Any:
    reply = await h.run_agent("hi", runner="samples", **options)
    assert reply.ok, reply.error
    return json.loads(reply.text or "{}")["storage.binding"]


@pytest.mark.parametrize("process", [False, True], ids=["in-process", "runtime-process"])
async def test_the_binding_keeps_its_bytes_for_its_next_run_and_no_other(process: bool) -> None:
    async with _harness(process=process) as h:
        assert await _binding(h, binding_id="pipeline-a") == [[], "abc"]
        # the same binding's next run (another conversation too) sees the key
        h.new_conversation()
        assert await _binding(h, binding_id="pipeline-a") == [["external.session_id"], "abc"]
        # another binding of the same runner starts empty
        assert await _binding(h, binding_id="pipeline-b") == [[], "abc"]
        # without a binding id, the run belongs to its bot's binding: empty too
        assert await _binding(h) == [[], "abc"]


async def test_without_the_manifest_permission_it_is_refused_unauthorized() -> None:
    async with _harness(process=True) as h:
        # the runner's declaration without storage 'binding': the host grants nothing
        assert await _binding(h, declaration={"permissions": {"storage": ["plugin"]}}) == REFUSED
        # a context shaped as LangBot 4.11.2 sends it: no binding_storage key at all
        released = make_resources(models=["scripted-model"], tools=["echo"], plugin_storage=True)
        reply = await h.run_agent("hi", runner="samples", resources=released, declaration=None)
        assert json.loads(reply.text or "{}")["storage.binding"] == REFUSED


async def test_a_host_policy_may_refuse_it_though_declared() -> None:
    resources = make_resources(models=["scripted-model"], tools=["echo"], plugin_storage=True)
    resources["storage"]["binding_storage"] = False
    async with _harness(process=False) as h:
        assert await _binding(h, resources=resources) == REFUSED


def _released_run_context() -> dict[str, Any]:
    """The run context LangBot 4.11.2 sent in a real acceptance run (captured)."""
    capture = Path(__file__).parent.parent / "fixtures/wire/host-4.11.2_acceptance_run.jsonl"
    for line in capture.read_text(encoding="utf-8").splitlines():
        message = json.loads(line).get("msg", {})
        if message.get("action") == "run_runner":
            context: dict[str, Any] = message["data"]["context"]
            context["runtime"]["deadline_at"] = None  # the capture's deadline has passed
            return context
    raise AssertionError("no run_runner in the capture")


async def test_under_the_released_host_the_runner_gets_a_clear_coded_refusal() -> None:
    """What LangBot 4.11.2 sends grants no binding storage (it builds only the plugin and
    workspace areas) and none of the artifact APIs: each is refused ``unauthorized``
    before anything is sent, saying what it needs."""
    local = LocalHost()
    host_end, plugin_end = memory_pair()
    async with (
        RPCSession(host_end, local, name="host").running(),
        RPCSession(plugin_end, None, name="plugin").running() as session,
    ):
        ctx = AgentRunContext.model_validate(_released_run_context())
        assert "binding_storage" not in ctx.resources.storage.model_dump()
        api = AgentRunAPIProxy(ctx=ctx, plugin_runtime_handler=AsPlugin(session, "a/b"))
        for call in (
            api.storage.get("binding", "k"),
            api.storage.set("binding", "k", b"v"),
            api.storage.list("binding"),
        ):
            with pytest.raises(AgentAPIException) as refused:
                await call
            assert (refused.value.code, refused.value.details["code"]) == REFUSED_CODES
            assert "LangBot 4.11.2 has none" in refused.value.message
        with pytest.raises(AgentAPIException) as upload:
            await api.artifacts.upload(b"x" * 10)
        assert upload.value.code == "unauthorized"
        with pytest.raises(AgentAPIException) as mount:
            await api.artifacts.mount("a")
        assert mount.value.code == "unauthorized"
    assert local.calls == []  # refused before sending
