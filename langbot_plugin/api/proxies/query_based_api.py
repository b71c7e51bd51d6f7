"""Host APIs tied to one query (the request an event or command belongs to).

Each call carries the query reference ``{query_id, query_uuid?}`` so the host knows
which request it concerns.
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from langbot_plugin.api.entities.builtin.platform.message import MessageChain
from langbot_plugin.api.proxies.channel import Channel
from langbot_plugin.api.proxies.langbot_api import DEFAULT_TIMEOUT
from langbot_plugin.rpc.errors import MalformedMessageError, NotReadyError

__all__ = ["QueryBasedAPIProxy"]


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

    async def _call(
        self, action: str, extra: dict[str, Any] | None = None, timeout: float = DEFAULT_TIMEOUT
    ) -> dict[str, Any]:
        channel: Channel | None = self.plugin_runtime_handler
        if channel is None:
            raise NotReadyError(f"{action}: this context is not connected to a runtime")
        return await channel.call(action, {**self._query_ref(), **(extra or {})}, timeout=timeout)

    @staticmethod
    def _expect(answer: dict[str, Any], key: str, action: str) -> Any:
        if key not in answer:
            raise MalformedMessageError(
                f"{action} answer lacks {key!r}", details={"action": action}
            )
        return answer[key]

    async def reply(
        self, message_chain: MessageChain, quote_origin: bool = False
    ) -> dict[str, Any]:
        """Reply to the query's message (optionally quoting it)."""
        extra = {
            "message_chain": message_chain.model_dump(mode="json"),
            "quote_origin": quote_origin,
        }
        return await self._call("reply_message", extra, timeout=180)

    async def get_bot_uuid(self) -> str:
        """The uuid of the bot that received the query."""
        return self._expect(await self._call("get_bot_uuid"), "bot_uuid", "get_bot_uuid")

    async def set_query_var(self, key: str, value: Any) -> dict[str, Any]:
        """Set a variable of the query."""
        return await self._call("set_query_var", {"key": key, "value": value})

    async def get_query_var(self, key: str) -> Any:
        """A variable of the query."""
        return self._expect(
            await self._call("get_query_var", {"key": key}), "value", "get_query_var"
        )

    async def get_query_vars(self) -> dict[str, Any]:
        """All variables of the query."""
        return self._expect(await self._call("get_query_vars"), "vars", "get_query_vars")

    async def create_new_conversation(self) -> dict[str, Any]:
        """Start a new conversation in the query's session."""
        return await self._call("create_new_conversation")

    async def list_pipeline_knowledge_bases(self) -> list[dict[str, Any]]:
        """The knowledge bases of the query's pipeline: ``[{uuid, name, description}]``."""
        answer = await self._call("list_pipeline_knowledge_bases")
        return self._expect(answer, "knowledge_bases", "list_pipeline_knowledge_bases")

    async def retrieve_knowledge(
        self, kb_id: str, query_text: str, top_k: int = 5, filters: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Retrieve from one of the pipeline's knowledge bases."""
        extra = {"kb_id": kb_id, "query_text": query_text, "top_k": top_k, "filters": filters or {}}
        answer = await self._call("retrieve_knowledge_base", extra)
        return self._expect(answer, "results", "retrieve_knowledge_base")
