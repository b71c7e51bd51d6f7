"""Our host library honours a runner's Protocol v1 ``context`` policy when it starts a
run (issue 23): what is inlined, how much, and that a runner declaring nothing gets the
host's default. The runner's side is ``examples/seed_notes`` (a real runtime)."""

from __future__ import annotations

from typing import Any

import pytest

from langbot_plugin.host import LocalHost

pytestmark = pytest.mark.anyio


async def _second_turn(declaration: dict[str, Any] | None, *earlier: str) -> dict[str, Any]:
    local = LocalHost()
    for text in earlier:
        await local.start_run("t/p", "r", text, conversation_id="c1", declaration=declaration)
    started = await local.start_run(
        "t/p", "r", "now", conversation_id="c1", declaration=declaration
    )
    return started.context


def _policy(**context: Any) -> dict[str, Any]:
    return {"capabilities": {}, "permissions": {}, "context": context}


async def test_a_runner_that_declares_nothing_gets_the_default() -> None:
    context = await _second_turn(None, "one")
    assert "bootstrap" not in context
    assert context["context"]["inline_policy"]["mode"] == "current_event"


async def test_self_managed_gets_no_tail_whatever_it_asks() -> None:
    context = await _second_turn(_policy(ownership="self_managed", bootstrap="recent_tail"), "one")
    assert "bootstrap" not in context
    assert context["context"]["inline_policy"]["reason"] == "runner_self_managed"


async def test_none_inlines_nothing() -> None:
    context = await _second_turn(_policy(bootstrap="none"), "one")
    assert "bootstrap" not in context
    assert context["context"]["inline_policy"]["mode"] == "none"


async def test_host_bootstrap_gets_the_tail_within_its_limits() -> None:
    declared = _policy(ownership="host_bootstrap", bootstrap="recent_tail", max_inline_events=2)
    context = await _second_turn(declared, "one", "two", "three")
    messages = context["bootstrap"]["messages"]
    assert [m["content"] for m in messages] == ["two", "three"]  # never "now": that is the input
    inline = context["context"]["inline_policy"]
    assert (inline["mode"], inline["delivered_count"], inline["messages_complete"]) == (
        "recent_tail",
        2,
        False,
    )


async def test_the_byte_budget_cuts_the_tail() -> None:
    declared = _policy(ownership="hybrid", bootstrap="recent_tail", max_inline_bytes=100)
    context = await _second_turn(declared, "x" * 30, "y" * 30)
    assert [m["content"] for m in context["bootstrap"]["messages"]] == ["y" * 30]


async def test_summary_tail_says_the_host_writes_no_summary() -> None:
    context = await _second_turn(_policy(ownership="hybrid", bootstrap="summary_tail"), "one")
    assert context["bootstrap"]["summary"] is None
    assert [m["content"] for m in context["bootstrap"]["messages"]] == ["one"]
    assert context["context"]["inline_policy"]["reason"] == "host_writes_no_summary"
