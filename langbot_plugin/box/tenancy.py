"""Workspace namespaces of the Box (the host and the Box compute them with the same functions)."""

from __future__ import annotations

from typing import Any

from box_runtime.scope import placement_session_id, workspace_namespace
from langbot_plugin.entities.io.context import ActionContext

__all__ = ["box_namespace", "box_runtime_namespace", "namespace_session_id"]


def box_namespace(action_context: ActionContext | dict[str, Any]) -> str:
    """The durable namespace of a workspace (placement generation left out)."""
    context = ActionContext.model_validate(action_context)
    return workspace_namespace(context.instance_uuid, context.workspace_uuid)


def box_runtime_namespace(action_context: ActionContext | dict[str, Any]) -> str:
    """The namespace of one placement of a workspace."""
    context = ActionContext.model_validate(action_context)
    return f"{box_namespace(context)}-g{context.placement_generation}"


def namespace_session_id(action_context: ActionContext | dict[str, Any], session_id: str) -> str:
    """The id the relay knows a placement's session by."""
    context = ActionContext.model_validate(action_context)
    return placement_session_id(
        context.instance_uuid, context.workspace_uuid, context.placement_generation, session_id
    )
