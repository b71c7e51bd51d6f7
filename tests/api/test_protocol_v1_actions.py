"""``action.requested`` executed by our host library when policy allows (issue 23,
seed 003's Protocol v1): the runner declares the ``platform_api`` capability and the
action, and the host offers it; anything else is recorded, not executed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from langbot_plugin.host.run_context import make_resources
from langbot_plugin.testing import PluginHarness

pytestmark = pytest.mark.anyio

PLUGIN = Path(__file__).resolve().parents[1] / "fixtures" / "plugins" / "seedapi"


async def _edit(runner: str) -> tuple[list[dict[str, Any]], list[Any]]:
    async with PluginHarness(PLUGIN, process=True) as h:
        reply = await h.run_agent(
            "edit it", runner=runner, resources=make_resources(tools=["event_reply"])
        )
        assert reply.ok, reply.error
        session = h.host.runs.registry.require(reply.outcome.run_id)
        actions = [e["metadata"] for e in session.events if e["type"] == "action.requested"]
        return actions, [d.message for d in session.deliveries]


async def test_a_declared_offered_action_is_executed() -> None:
    actions, replies = await _edit("editor")
    (edited, pinned) = actions
    assert edited["action_executed"] is True
    assert edited["action_result"]["message_id"].endswith(":0")
    assert pinned == {"action_not_executed": "this host does not offer this platform action"}
    assert replies == [[{"type": "Plain", "text": "final"}]]


async def test_an_undeclared_action_is_not_executed() -> None:
    actions, replies = await _edit("silent_editor")
    assert (
        actions
        == [
            {"action_not_executed": "the runner does not declare this platform action"},
        ]
        * 2
    )
    assert replies == [[{"type": "Plain", "text": "draft"}]]


async def test_another_conversations_message_is_not_edited() -> None:
    async with PluginHarness(PLUGIN) as h:
        tools = make_resources(tools=["event_reply"])
        first = await h.run_agent("draft it", runner="editor", resources=tools)
        h.new_conversation()
        other = f"{first.outcome.run_id}:0"
        second = await h.run_agent(
            "edit", runner="editor", resources=tools, config={"edit": other, "text": "hijacked"}
        )
        session = h.host.runs.registry.require(second.outcome.run_id)
        edit = next(e["metadata"] for e in session.events if e["type"] == "action.requested")
        kept = h.host.runs.registry.require(first.outcome.run_id).deliveries[0].message
    assert edit["action_error_code"] == "not_found"
    assert kept == [{"type": "Plain", "text": "final"}]  # its own run's edit, not the other's
