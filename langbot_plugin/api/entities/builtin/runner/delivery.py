"""0.7 path for where and how a run's output is delivered (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``delivery`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner.delivery import DeliveryContext
from langbot_plugin.api.entities.builtin.agent_runner.interaction import (
    InteractionDeliveryCapabilities,
)

__all__ = ["DeliveryContext", "InteractionDeliveryCapabilities"]
