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

    0.7 hosts add ``automatic_reply``; like any unknown key it is kept as an attribute.
    """

    surface: str
    reply_target: dict[str, Any] | None = None
    supports_streaming: bool = False
    supports_edit: bool = False
    supports_reaction: bool = False
    max_message_size: int | None = None
    interactions: InteractionDeliveryCapabilities | None = None
    platform_capabilities: dict[str, Any] = Field(default_factory=dict)
