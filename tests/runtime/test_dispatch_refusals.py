"""A run the runtime cannot hand to a plugin ends as one ``run.failed`` (``runtime/dispatch.py``).

The host asks ``lbp rt`` to run a runner; when the plugin is not running in the caller's
workspace, is disabled, is not initialized yet, or has no runner of that name, the
plugin cannot report it, so the runtime answers with a single ``run.failed`` of its own,
with a ``runner.*`` code, and opens no live run.
"""

from __future__ import annotations

from typing import Any, cast

import pytest

from langbot_plugin.protocol import control_link as ctl
from langbot_plugin.protocol.containers import PluginContainer
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.runtime.dispatch import run_runner
from langbot_plugin.runtime.plugins import PluginHandle, PluginRegistry
from langbot_plugin.runtime.runs import LiveRuns
from tests.runtime.peers import container

pytestmark = pytest.mark.anyio

WORKSPACE = ActionScope(instance_uuid="inst-1", workspace_uuid="ws-1")


def registry_with(**fields: Any) -> PluginRegistry:
    registry = PluginRegistry()
    registry.add(
        PluginHandle(
            session=cast(Any, None),  # a refused run sends nothing to the plugin
            container=PluginContainer.model_validate({**container(), **fields}),
            debug=True,
            workspace=WORKSPACE,
            binding=WORKSPACE,
        )
    )
    return registry


async def outcome(
    registry: PluginRegistry, runner: str = "echo", scope: ActionScope = WORKSPACE
) -> list[dict[str, Any]]:
    params = ctl.HostRunRunnerParams(
        plugin_author="tester",
        plugin_name="echoplug",
        runner_name=runner,
        context={"run_id": "run-1"},
    )
    live = LiveRuns()
    items = [item.model_dump() async for item in run_runner(registry, live, scope, params)]
    assert "run-1" not in live  # no live run was opened for a refused one
    return items


@pytest.mark.parametrize(
    ("fields", "runner", "scope", "code"),
    [
        (
            {},
            "echo",
            ActionScope(instance_uuid="inst-1", workspace_uuid="ws-2"),
            "runner.plugin_not_found",
        ),
        ({"enabled": False, "status": "initialized"}, "echo", WORKSPACE, "runner.plugin_disabled"),
        ({"status": "mounted"}, "echo", WORKSPACE, "runner.plugin_not_initialized"),
        ({"status": "initialized"}, "nobody", WORKSPACE, "runner.not_found"),
        ({"status": "initialized"}, "hello", WORKSPACE, "runner.not_found"),  # a Command
    ],
)
async def test_a_run_the_runtime_cannot_start_is_one_run_failed(
    fields: dict[str, Any], runner: str, scope: ActionScope, code: str
) -> None:
    (item,) = await outcome(registry_with(**fields), runner, scope)
    assert item["type"] == "run.failed"
    assert item["run_id"] == "run-1"
    assert item["sequence"] == 1
    assert item["data"]["code"] == code
    assert item["data"]["retryable"] is False
    assert "tester/echoplug" in item["data"]["error"]
