"""Executing a run's ``action.requested`` results (seed 003's Protocol v1) when policy
allows, in our host library.

An action runs only when the runner declares it (``platform_api`` capability and
permission, frozen at start: :func:`declared_actions`), the host offers it
(:attr:`PlatformActions.handlers`; ``RunHost`` offers :data:`EDIT_MESSAGE`, whose
``target.message_id`` is ``"<run_id>:<n>"``, the run's ``n``-th delivery) and it is not
one handled otherwise (``interaction.requested``). There is no approval step. The
outcome is in the ledger event's metadata and the run's audit (docs/protocol-v1.md).
The released host executes none of them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

from langbot_plugin.api.entities.builtin.agent_runner.interaction import (
    INTERACTION_REQUESTED_ACTION,
)
from langbot_plugin.host.registry import RunRegistry, RunSession
from langbot_plugin.rpc.errors import InvalidParamsError, NotFoundError, RPCError

__all__ = [
    "EDIT_MESSAGE",
    "PlatformAction",
    "PlatformActions",
    "declared_actions",
    "edit_delivered_message",
]

#: The platform action our host library offers by default.
EDIT_MESSAGE = "message.edit"

#: ``handler(session, target, payload)`` performs the action; its answer is recorded.
PlatformAction = Callable[[RunSession, dict[str, Any], dict[str, Any]], Awaitable[Any]]


def declared_actions(declaration: Mapping[str, Any] | None) -> frozenset[str]:
    """The actions a runner's Protocol v1 declaration asks to have executed."""
    declared = declaration or {}
    capabilities = declared.get("capabilities")
    permissions = declared.get("permissions")
    if not isinstance(capabilities, dict) or capabilities.get("platform_api") is not True:
        return frozenset()
    actions = permissions.get("platform_api") if isinstance(permissions, dict) else None
    values: list[Any] = actions if isinstance(actions, list) else []  # pyright: ignore[reportUnknownVariableType]
    return frozenset(str(action) for action in values)


class PlatformActions:
    """The actions this host offers, and their execution (see the module docstring)."""

    def __init__(self) -> None:
        self.handlers: dict[str, PlatformAction] = {}

    async def execute(self, session: RunSession, data: dict[str, Any]) -> dict[str, Any]:
        """Run one ``action.requested`` if policy allows; the ledger metadata of it."""
        action = data.get("action")
        if action == INTERACTION_REQUESTED_ACTION or not isinstance(action, str):
            return {}
        if action not in session.platform_actions:
            return {"action_not_executed": "the runner does not declare this platform action"}
        handler = self.handlers.get(action)
        if handler is None:
            return {"action_not_executed": "this host does not offer this platform action"}
        target, payload = data.get("target"), data.get("payload")
        try:
            answer = await handler(
                session,
                dict(target) if isinstance(target, dict) else {},  # pyright: ignore[reportUnknownArgumentType]
                dict(payload) if isinstance(payload, dict) else {},  # pyright: ignore[reportUnknownArgumentType]
            )
        except RPCError as exc:
            return {"action_not_executed": exc.message, "action_error_code": exc.code}
        return {"action_executed": True, "action_result": answer}


def edit_delivered_message(registry: RunRegistry) -> PlatformAction:
    """:data:`EDIT_MESSAGE`: replace the text of a delivered reply of the conversation."""

    async def edit(
        session: RunSession, target: dict[str, Any], payload: dict[str, Any]
    ) -> dict[str, Any]:
        text = payload.get("text")
        if not isinstance(text, str) or not text.strip():
            raise InvalidParamsError("message.edit needs payload.text", details=payload)
        wanted = target.get("message_id")
        run_id, _, index = str(wanted).rpartition(":")
        owner = registry.get(run_id)
        here = session.scope.conversation_id
        if (
            owner is None
            or here is None
            or owner.scope.conversation_id != here
            or not index.isdigit()
            or int(index) >= len(owner.deliveries)
        ):
            raise NotFoundError(
                f"no delivered message {wanted!r} in this conversation",
                details={"message_id": wanted},
            )
        position = int(index)
        edited = [{"type": "Plain", "text": text}]
        owner.deliveries[position] = replace(owner.deliveries[position], message=edited)
        return {"message_id": wanted}

    return edit
