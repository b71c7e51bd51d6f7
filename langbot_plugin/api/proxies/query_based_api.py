"""Host APIs tied to one query (the request an event or command belongs to).

Each call carries the query reference ``{query_id, query_uuid?}`` so the host knows
which request it concerns.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from langbot_plugin.api.entities._legacy import attach_legacy_config
from langbot_plugin.api.entities.builtin.platform.message import MessageChain
from langbot_plugin.api.proxies.channel import Channel, as_caller
from langbot_plugin.protocol import host_api
from langbot_plugin.protocol.handler_calls import HandlerCaller
from langbot_plugin.protocol.spec import ActionSpec
from langbot_plugin.rpc.errors import NotReadyError

__all__ = ["QueryBasedAPIProxy"]

P = TypeVar("P", bound=BaseModel)
R = TypeVar("R")


class QueryBasedAPIProxy(BaseModel):
    """Query-scoped APIs; ``plugin_runtime_handler`` is the connection (never dumped)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    query_id: int = 0
    query_uuid: str | None = None
    plugin_runtime_handler: Any = Field(default=None, exclude=True, repr=False)

    @model_serializer(mode="wrap")
    def _drop_missing_query_uuid(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        if dumped.get("query_uuid", "") is None:
            del dumped["query_uuid"]
        return dumped

    def _query_ref(self) -> dict[str, Any]:
        ref: dict[str, Any] = {"query_id": self.query_id}
        if self.query_uuid is not None:
            ref["query_uuid"] = self.query_uuid
        return ref

    async def _send(self, spec: ActionSpec[P, R], params: P, *, waits: bool = False) -> R:
        """Call ``spec``; ``waits``: the reference names a wait for it (a reference-style
        handler keeps its own default for the others)."""
        channel: Channel | None = self.plugin_runtime_handler
        if channel is None:
            raise NotReadyError(f"{spec.name}: this context is not connected to a runtime")
        caller = as_caller(channel)
        if isinstance(caller, HandlerCaller) and not waits:
            return await spec.call(caller, params, timeout=None)
        return await spec.call(caller, params)

    async def reply(
        self, message_chain: MessageChain, quote_origin: bool = False
    ) -> dict[str, Any]:
        """Reply to the query's message (optionally quoting it)."""
        params = host_api.messaging.ReplyParams(
            **self._query_ref(), message_chain=message_chain, quote_origin=quote_origin
        )
        return (await self._send(host_api.messaging.REPLY_MESSAGE, params, waits=True)).model_dump()

    async def get_bot_uuid(self) -> str:
        """The uuid of the bot that received the query."""
        params = host_api.common.QueryParams(**self._query_ref())
        return (await self._send(host_api.messaging.GET_BOT_UUID, params)).bot_uuid

    async def set_query_var(self, key: str, value: Any) -> dict[str, Any]:
        """Set a variable of the query."""
        params = host_api.messaging.QueryVarSet(**self._query_ref(), key=key, value=value)
        return (await self._send(host_api.messaging.SET_QUERY_VAR, params)).model_dump()

    async def get_query_var(self, key: str) -> Any:
        """A variable of the query."""
        params = host_api.messaging.QueryVarKey(**self._query_ref(), key=key)
        return (await self._send(host_api.messaging.GET_QUERY_VAR, params)).value

    async def get_query_vars(self) -> dict[str, Any]:
        """All variables of the query."""
        params = host_api.common.QueryParams(**self._query_ref())
        return (await self._send(host_api.messaging.GET_QUERY_VARS, params)).vars

    async def create_new_conversation(self) -> dict[str, Any]:
        """Start a new conversation in the query's session."""
        params = host_api.common.QueryParams(**self._query_ref())
        return (await self._send(host_api.messaging.CREATE_NEW_CONVERSATION, params)).model_dump()

    async def list_pipeline_knowledge_bases(self) -> list[dict[str, Any]]:
        """The knowledge bases of the query's pipeline: ``[{uuid, name, description}]``."""
        params = host_api.common.QueryParams(**self._query_ref())
        return (
            await self._send(host_api.knowledge.LIST_PIPELINE_KNOWLEDGE_BASES, params)
        ).knowledge_bases

    async def retrieve_knowledge(
        self, kb_id: str, query_text: str, top_k: int = 5, filters: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Retrieve from one of the pipeline's knowledge bases."""
        params = host_api.knowledge.RetrievalParams(
            **self._query_ref(),
            kb_id=kb_id,
            query_text=query_text,
            top_k=top_k,
            filters=filters or {},
        )
        return (await self._send(host_api.knowledge.RETRIEVE_KNOWLEDGE_BASE, params)).results


# the reference's pydantic-v1 ``class Config``, mirrored from ``model_config`` (the event
# and execute context proxies inherit it)
attach_legacy_config(QueryBasedAPIProxy)
