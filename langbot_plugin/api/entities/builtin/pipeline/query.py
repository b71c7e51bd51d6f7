"""A request travelling through the host's pipeline.

The host builds and owns :class:`Query`; plugins see it only inside events that
carry it in-process. It is importable here so host-side code and tests can use the
same model.
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    ConfigDict,
    Field,
    SerializationInfo,
    SerializeAsAny,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from langbot_plugin.api.entities._legacy import attach_legacy_config
from langbot_plugin.api.entities.builtin.platform import events as platform_events
from langbot_plugin.api.entities.builtin.platform import message as platform_message
from langbot_plugin.api.entities.builtin.provider import message as provider_message
from langbot_plugin.api.entities.builtin.provider import prompt as provider_prompt
from langbot_plugin.api.entities.builtin.provider import session as provider_session
from langbot_plugin.api.entities.builtin.resource import tool as resource_tool
from langbot_plugin.api.entities.execution import WorkspaceExecutionScope

__all__ = ["Query"]

_AnyMessage = provider_message.Message | provider_message.MessageChunk


class Query(WorkspaceExecutionScope):
    """One user request and everything the pipeline stages attach to it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    query_id: int
    query_uuid: str | None = None
    launcher_type: provider_session.LauncherTypes
    launcher_id: int | str
    sender_id: int | str
    message_event: SerializeAsAny[platform_events.MessageEvent]
    message_chain: platform_message.MessageChain
    bot_uuid: str | None = None
    pipeline_uuid: str | None = None
    pipeline_config: dict[str, Any] | None = None
    #: The platform adapter that received the request (host objects only).
    adapter: Any = None
    session: provider_session.Session | None = None
    messages: list[_AnyMessage] | None = Field(default_factory=list)
    prompt: provider_prompt.Prompt | None = None
    user_message: _AnyMessage | None = None
    variables: dict[str, Any] | None = None
    use_llm_model_uuid: str | None = None
    use_funcs: list[resource_tool.LLMTool] | None = None
    resp_messages: list[_AnyMessage] | list[platform_message.MessageChain] | None = Field(
        default_factory=list
    )
    resp_message_chain: list[platform_message.MessageChain] | None = None
    current_stage_name: str | None = None

    @field_validator("message_event", mode="before")
    @classmethod
    def _pick_event_class(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return platform_events.Event.parse_subtype(value)
        return value

    @model_validator(mode="after")
    def propagate_execution_scope(self) -> Query:
        """Share the workspace scope between the query, its message event and its
        session (and the bot between query and session), refusing contradictions."""
        self.inherit_execution_scope(self.message_event)
        self.inherit_execution_scope(self.session)
        self.message_event.inherit_execution_scope(self)
        if self.session is not None:
            self.session.inherit_execution_scope(self)
            if self.session.bot_uuid is None:
                self.session.bot_uuid = self.bot_uuid
            elif self.bot_uuid is not None and self.session.bot_uuid != self.bot_uuid:
                raise ValueError("Session bot_uuid does not match Query bot_uuid")
        return self

    @model_serializer(mode="wrap")
    def _wire_form(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        full: dict[str, Any] = handler(self)
        keep = ["query_id", "launcher_type", "launcher_id", "sender_id", "message_event"]
        keep += ["message_chain", "bot_uuid", "pipeline_uuid", "pipeline_config", "session"]
        keep += ["messages", "prompt"]
        dumped: dict[str, Any] = {**self.execution_scope_dump()}
        for name in keep:
            dumped[name] = full.get(name)
            if name == "query_id" and self.query_uuid is not None:
                dumped["query_uuid"] = self.query_uuid
        dumped["launcher_type"] = self.launcher_type.value
        dumped["messages"] = dumped["messages"] or []
        return dumped

    def set_variable(self, key: str, value: Any) -> None:
        """Set a pipeline variable."""
        if self.variables is None:
            self.variables = {}
        self.variables[key] = value

    def get_variable(self, key: str) -> Any:
        """A pipeline variable (None when unset)."""
        return (self.variables or {}).get(key)

    def get_variables(self) -> dict[str, Any]:
        """All pipeline variables."""
        if self.variables is None:
            self.variables = {}
        return self.variables


attach_legacy_config(Query)
