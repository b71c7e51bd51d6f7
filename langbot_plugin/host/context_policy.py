"""Honouring a runner's Protocol v1 ``context`` policy when a run starts.

A host that passes the runner's declaration to
:meth:`~langbot_plugin.host.run_host.RunHost.start_run` (``declaration=``) gets what
docs/protocol-v1.md describes: ``bootstrap: none`` and ``self_managed`` (the default)
inline the current event only; ``host_bootstrap`` / ``hybrid`` with ``recent_tail`` or
``summary_tail`` put the conversation's last messages in ``ctx.bootstrap.messages``
(at most :data:`MAX_INLINE_EVENTS`, within :data:`MAX_INLINE_BYTES`; this host writes
no summaries). The current message is the runner's ``input``, never repeated in the
tail. The released host reads none of this.
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
