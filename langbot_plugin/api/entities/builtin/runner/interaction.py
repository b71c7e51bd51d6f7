"""0.7 path for structured interactions (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``interaction`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner.interaction import (
    INTERACTION_REQUESTED_ACTION,
    INTERACTION_SUBMITTED_EVENT,
    InteractionAction,
    InteractionActionStyle,
    InteractionDeliveryCapabilities,
    InteractionField,
    InteractionFieldType,
    InteractionOption,
    InteractionRequest,
    InteractionSubmission,
    JSONValue,
)

__all__ = [
    "INTERACTION_REQUESTED_ACTION",
    "INTERACTION_SUBMITTED_EVENT",
    "InteractionAction",
    "InteractionActionStyle",
    "InteractionDeliveryCapabilities",
    "InteractionField",
    "InteractionFieldType",
    "InteractionOption",
    "InteractionRequest",
    "InteractionSubmission",
    "JSONValue",
]
