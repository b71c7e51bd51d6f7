"""Honouring a runner's Protocol v1 ``context`` policy when a run starts.

The plugin runtime lists a runner's Protocol v1 declaration beside its manifest
(:mod:`langbot_plugin.protocol.runner_declaration`); a host that passes it to
:meth:`~langbot_plugin.host.run_host.RunHost.start_run` (``declaration=``) gets this:

=================================  ==================================================
policy                             what the run's context holds
=================================  ==================================================
``bootstrap: none``                ``inline_policy.mode`` ``none``; no ``bootstrap``
``self_managed`` (the default)     the current event only (``current_event``); no
                                   ``bootstrap``, whatever ``bootstrap`` asks
``host_bootstrap`` / ``hybrid``    ``recent_tail``: ``ctx.bootstrap.messages``, the
with ``recent_tail``               conversation's last ``max_inline_events`` messages
                                   (at most :data:`MAX_INLINE_EVENTS`) within
                                   ``max_inline_bytes`` (0: :data:`MAX_INLINE_BYTES`)
``summary_tail``                   the same tail; ``summary`` stays empty: the host
                                   writes no summaries (seed 003: the runner owns
                                   compaction), ``inline_policy.reason`` says so
=================================  ==================================================

The current message is the runner's ``input``, never repeated in the tail. The released
host reads none of this: a runner using it gets the current event only there.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from langbot_plugin.api.entities.builtin.agent_runner.manifest_v1 import (
    AgentRunnerContextPolicy,
)
from langbot_plugin.host.grants import RunScope
from langbot_plugin.host.paging import PageWindow
from langbot_plugin.host.transcript import TranscriptStore

__all__ = ["MAX_INLINE_BYTES", "MAX_INLINE_EVENTS", "apply_context_policy"]

#: Hard caps of an inlined tail, whatever the policy asks.
MAX_INLINE_EVENTS = 50
MAX_INLINE_BYTES = 64 * 1024


def _policy(declaration: Mapping[str, Any] | None) -> AgentRunnerContextPolicy | None:
    raw = (declaration or {}).get("context")
    return AgentRunnerContextPolicy.model_validate(raw) if isinstance(raw, dict) else None


def _tail(items: list[dict[str, Any]], limit: int, budget: int) -> list[dict[str, Any]]:
    """The newest messages (oldest first) that fit ``limit`` and ``budget`` bytes."""
    kept: list[dict[str, Any]] = []
    used = 0
    for item in items:  # newest first
        message = {"role": item.get("role"), "content": item.get("content")}
        size = len(json.dumps(message, ensure_ascii=False).encode())
        if len(kept) >= limit or used + size > budget:
            break
        kept.append(message)
        used += size
    kept.reverse()
    return kept


async def apply_context_policy(
    context: dict[str, Any],
    declaration: Mapping[str, Any] | None,
    transcript: TranscriptStore,
    scope: RunScope,
) -> None:
    """Set ``context``'s inline policy (and ``bootstrap``) from the runner's declared
    ``context`` policy; a runner that declares none keeps the host's default."""
    policy = _policy(declaration)
    if policy is None:
        return
    inline = context["context"]["inline_policy"]
    if policy.bootstrap == "none":
        inline.update(mode="none", delivered_count=0, reason="runner_policy_none")
        return
    if policy.ownership == "self_managed" or policy.bootstrap == "current_event":
        inline.update(mode="current_event", reason="runner_self_managed")
        return
    limit = min(policy.max_inline_events or MAX_INLINE_EVENTS, MAX_INLINE_EVENTS)
    budget = min(policy.max_inline_bytes or MAX_INLINE_BYTES, MAX_INLINE_BYTES)
    current = context["context"].get("latest_cursor")  # the run's own message
    before = str(int(current) - 1) if current is not None else None
    page = await transcript.page(scope, PageWindow.of(before, limit=limit))
    messages = _tail(page["items"], limit, budget)
    total = context["context"].get("transcript_seq")
    context["bootstrap"] = {"messages": messages, "summary": None, "artifacts": [], "metadata": {}}
    inline.update(
        mode=policy.bootstrap,
        delivered_count=len(messages),
        source_total_count=total,
        messages_complete=not page["has_more"] and len(messages) == len(page["items"]),
        reason="host_writes_no_summary" if policy.bootstrap == "summary_tail" else "runner_policy",
    )
