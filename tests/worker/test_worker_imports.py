"""What a plugin worker imports before its plugin runs (issue 22: a worker's memory).

A worker that serves a plain plugin does not import the whole action catalogue (every
link's declarations, for the reference Handler's enum) nor the run-needs table with the
agent-run entity tree behind it; both are imported when first needed (a reference
Handler's call, a call made within a run)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from langbot_plugin.worker.template import WARM_MODULES

NOT_AT_START = (
    "langbot_plugin.protocol.catalogue",
    "langbot_plugin.protocol.action_enums",
    "langbot_plugin.protocol.run_needs",
    "langbot_plugin.protocol.host_api.models",
)


def test_a_worker_starts_without_the_catalogue_or_the_run_needs() -> None:
    script = (
        "import importlib, json, sys\n"
        f"for name in {list(WARM_MODULES)!r}: importlib.import_module(name)\n"
        f"print(json.dumps([m for m in {list(NOT_AT_START)!r} if m in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(done.stdout) == []


class _Handler:
    """The reference Handler's calling surface, recording what it was given."""

    def __init__(self) -> None:
        self.given: list[object] = []

    async def call_action(self, action: object, data: dict[str, Any]) -> dict[str, Any]:
        self.given.append(action)
        return {}


@pytest.mark.anyio
async def test_they_are_there_when_needed() -> None:
    from langbot_plugin.api.proxies import run_binding
    from langbot_plugin.protocol.action_enums import PluginToRuntimeAction
    from langbot_plugin.protocol.handler_calls import HandlerCaller

    handler = _Handler()
    await HandlerCaller(handler).call("invoke_llm", {}, timeout=None)
    assert handler.given == [PluginToRuntimeAction("invoke_llm")]
    assert isinstance(handler.given[0], PluginToRuntimeAction)
    assert run_binding.stamp("invoke_llm", {}, object(), 5.0) == 5.0
