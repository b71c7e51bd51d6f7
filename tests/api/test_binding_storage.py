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

from langbot_plugin.host import HostTool
from langbot_plugin.host.run_context import make_resources
from langbot_plugin.testing import PluginHarness, ScriptedLLM

pytestmark = pytest.mark.anyio

PLUGIN = Path(__file__).resolve().parents[1] / "fixtures" / "plugins" / "seedapi"
REFUSED = {"code": "unauthorized", "finer": "permission_denied.storage"}


def _harness(*, process: bool) -> PluginHarness:
    tool = HostTool("echo", lambda p: {"echo": p.get("text")}, description="echoes")
    return PluginHarness(PLUGIN, llm=ScriptedLLM(["a"] * 12), tools=[tool], process=process)


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
