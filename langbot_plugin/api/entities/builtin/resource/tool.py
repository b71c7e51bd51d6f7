"""Tools offered to a model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from langbot_plugin.api.entities._legacy import attach_legacy_config

__all__ = ["LLMTool"]


class LLMTool(BaseModel):
    """A tool the model may call: name, descriptions and a JSON-schema of parameters.

    ``func`` (the local implementation, if any) is optional and never serialized.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    name: str
    human_desc: str
    description: str
    parameters: dict[str, Any]
    func: Callable[..., Any] | None = Field(default=None, exclude=True)


attach_legacy_config(LLMTool)
