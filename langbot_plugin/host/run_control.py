"""What a user's "stop", "clear" and a follow-up message do to runs (seed 002):
:func:`stop_conversation`, :func:`clear_conversation` and :func:`steer_run`, which
:class:`~langbot_plugin.host.run_host.RunHost` offers as methods.
"""

from __future__ import annotations

from collections.abc import Callable

from langbot_plugin.host.event_log import EventLogStore
from langbot_plugin.host.grants import STEERING_FLAG, RunScope
from langbot_plugin.host.registry import RunRegistry, RunSession
from langbot_plugin.host.state_store import StateStore
from langbot_plugin.host.transcript import TranscriptStore

__all__ = ["clear_conversation", "steer_run", "stop_conversation"]


async def steer_run(
    registry: RunRegistry,
    events: EventLogStore,
    transcript: TranscriptStore,
    run_id: str,
    text: str,
    *,
    clock: Callable[[], float],
) -> bool:
    """Queue ``text`` for the live run ``run_id``; ``False`` if it cannot take it
    (finished, no ``steering_pull`` grant, queue full)."""
    session = registry.get(run_id)
    if session is None or session.finished or STEERING_FLAG not in session.grants.apis:
        return False
    record = await events.append(
        session.scope, event_type="message.received", source="host_adapter", input_summary=text
    )
    if session.scope.conversation_id is not None:
        await transcript.append(
            session.scope, role="user", content=text, event_id=record["event_id"]
        )
    scope = session.scope
    return session.steering.push(
        {
            "claimed_run_id": run_id,
            "runner_id": session.runner_id,
            "claimed_at": int(clock()),
            "event": {
                "event_id": record["event_id"],
                "event_type": "message.received",
                "event_time": record["event_time"],
                "source": "host_adapter",
                "data": {},
            },
            "input": {"text": text, "contents": [{"type": "text", "text": text}]},
            "conversation": {
                "conversation_id": scope.conversation_id,
                "thread_id": scope.thread_id,
                "bot_id": scope.bot_id,
                "workspace_id": scope.workspace_id,
            },
            "actor": {"actor_type": scope.actor_type or "user", "actor_id": scope.actor_id},
            "metadata": {},
        }
    )


async def clear_conversation(
    transcript: TranscriptStore, state: StateStore, target: RunSession | RunScope
) -> int:
    """Drop the conversation's history and every runner's conversation-scope state in
    it, so no runner resumes an external harness session (``external.session_id``) from
    before. Actor, subject and runner scopes, the event log and the audit are kept.
    Returns the state values dropped."""
    scope = target.scope if isinstance(target, RunSession) else target
    await transcript.clear(scope)
    ref = scope.conversation_ref()
    dropped = 0 if ref is None else await state.clear_conversation(ref)
    if isinstance(target, RunSession):  # values written before the index existed
        key = target.state_key("conversation")
        if key is not None:
            dropped += await state.clear(key)
    return dropped


def stop_conversation(
    registry: RunRegistry, target: RunSession | RunScope, reason: str
) -> list[RunSession]:
    """Cancel every live run of the conversation; returns those runs."""
    scope = target.scope if isinstance(target, RunSession) else target
    ref = scope.conversation_ref()
    live = [r for r in registry.active() if ref is not None and r.scope.conversation_ref() == ref]
    for run in live:
        registry.request_cancel(run.run_id, reason)
    return live
