"""Where and how the run's output is delivered."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from langbot_plugin.api.entities.builtin.agent_runner.compat import HostContextModel
from langbot_plugin.api.entities.builtin.agent_runner.interaction import (
    InteractionDeliveryCapabilities,
)

__all__ = ["DeliveryContext"]


class DeliveryContext(HostContextModel):
    """The output surface (``platform``, ``webui``, ``api``, ...) and what it supports.

    ``automatic_reply`` (0.7 hosts): the host's output stages deliver the messages and
    files the run returns; when false the runner replies explicitly (``ctx.reply``).
    """

    automatic_reply: bool = False
    surface: str
    reply_target: dict[str, Any] | None = None
    supports_streaming: bool = False
    supports_edit: bool = False
    supports_reaction: bool = False
    max_message_size: int | None = None
    interactions: InteractionDeliveryCapabilities | None = None
    platform_capabilities: dict[str, Any] = Field(default_factory=dict)
