"""The base class of plugin events (see :mod:`langbot_plugin.api.entities.events`)."""

from __future__ import annotations

from pydantic import ConfigDict, Field, model_validator

from langbot_plugin.api.entities._legacy import attach_legacy_config
from langbot_plugin.api.entities.builtin.pipeline.query import Query
from langbot_plugin.api.entities.execution import WorkspaceExecutionScope

__all__ = ["BaseEventModel"]


class BaseEventModel(WorkspaceExecutionScope):
    """Base of all plugin events; ``query`` exists only inside the host process."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    query_uuid: str | None = None
    query: Query | None = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def inherit_query_execution_scope(self) -> BaseEventModel:
        """Take the workspace scope and ``query_uuid`` of the in-process query, and
        refuse a ``query_uuid`` that contradicts it."""
        if self.query is not None:
            self.inherit_execution_scope(self.query)
            if self.query_uuid is None:
                self.query_uuid = self.query.query_uuid
            elif self.query.query_uuid is not None and self.query_uuid != self.query.query_uuid:
                raise ValueError("Event query_uuid does not match Query query_uuid")
        return self


attach_legacy_config(BaseEventModel)
