"""Structured interactions: a runner asks the host to show a form, a confirmation or
a choice, and a later run receives the user's submission.

The request models are strict (unknown keys rejected, lengths bounded) because the
runner writes them; the models the host sends are lenient.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from langbot_plugin.api.entities.builtin.agent_runner.compat import HostContextModel

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

#: ``action.requested`` action name of an interaction request.
INTERACTION_REQUESTED_ACTION = "interaction.requested"
#: Event type of the run that receives the submission.
INTERACTION_SUBMITTED_EVENT = "interaction.submitted"

InteractionFieldType = Literal[
    "text", "textarea", "select", "multiselect", "number", "boolean", "file"
]
InteractionActionStyle = Literal["default", "primary", "danger"]
JSONValue = JsonValue


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class InteractionOption(_Strict):
    """One choice of a select field."""

    value: str = Field(min_length=1, max_length=512)
    label: str = Field(min_length=1, max_length=512)
    description: str | None = Field(default=None, max_length=2000)


class InteractionField(_Strict):
    """One input the host renders."""

    id: str = Field(min_length=1, max_length=128)
    label: str = Field(min_length=1, max_length=512)
    type: InteractionFieldType
    required: bool = False
    options: list[InteractionOption] = Field(default_factory=list, max_length=100)
    placeholder: str | None = Field(default=None, max_length=1000)
    default: JSONValue = None


class InteractionAction(_Strict):
    """A submit button."""

    id: str = Field(min_length=1, max_length=128)
    label: str = Field(min_length=1, max_length=512)
    style: InteractionActionStyle = "default"


class InteractionRequest(_Strict):
    """What the runner asks the host to show; ``fallback_text`` is used where the
    surface cannot render it."""

    interaction_id: str = Field(min_length=1, max_length=255)
    kind: Literal["form", "confirmation", "choice"] = "form"
    title: str = Field(min_length=1, max_length=1000)
    description: str | None = Field(default=None, max_length=10000)
    fields: list[InteractionField] = Field(default_factory=list, max_length=50)
    actions: list[InteractionAction] = Field(default_factory=list, max_length=20)
    expires_at: int | None = None
    fallback_text: str = Field(min_length=1, max_length=20000)


class InteractionSubmission(HostContextModel):
    """The user's answer to an earlier request, validated by the host."""

    interaction_id: str = Field(min_length=1, max_length=255)
    action_id: str | None = Field(default=None, max_length=128)
    values: dict[str, JSONValue] = Field(default_factory=dict)
    submitted_at: int | None = None


class InteractionDeliveryCapabilities(HostContextModel):
    """Which interaction features the delivery surface supports."""

    field_types: list[InteractionFieldType | str] = Field(default_factory=list)
    action_styles: list[InteractionActionStyle | str] = Field(default_factory=list)
    supports_updates: bool = False
    max_fields: int | None = Field(default=None, ge=0)
