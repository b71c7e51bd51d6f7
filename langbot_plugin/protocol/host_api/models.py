"""Plugin -> host actions of models and tools: LLM calls, token counts, embeddings,
rerank, and the host's tools."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from langbot_plugin.api.entities.builtin.agent_runner.run_answers import (
    RerankResult,
    ToolDetail,
)
from langbot_plugin.api.entities.builtin.provider.message import (
    LLMTokenUsage,
    Message,
    MessageChunk,
)
from langbot_plugin.api.entities.builtin.resource.tool import LLMTool
from langbot_plugin.protocol.host_api.common import RunScopedParams, to_host
from langbot_plugin.protocol.spec import Result

__all__ = [
    "CALL_TOOL",
    "COUNT_TOKENS",
    "GET_LLM_MODELS",
    "GET_TOOL_DETAIL",
    "INVOKE_EMBEDDING",
    "INVOKE_LLM",
    "INVOKE_LLM_STREAM",
    "INVOKE_RERANK",
    "CallToolParams",
    "EmbeddingParams",
    "Embeddings",
    "InvokeLLMParams",
    "LLMAnswer",
    "LLMModels",
    "LLMStreamItem",
    "RerankParams",
    "RerankResult",
    "Reranked",
    "TokenCount",
    "ToolCallAnswer",
    "ToolDetail",
    "ToolDetailAnswer",
    "ToolRef",
]


class LLMModels(Result):
    llm_models: list[str]


class InvokeLLMParams(RunScopedParams):
    """``timeout`` (seconds) is the caller's wait, which the host may use for its own."""

    llm_model_uuid: str
    messages: list[Message]
    funcs: list[LLMTool] = Field(default_factory=list[LLMTool])
    extra_args: dict[str, Any] = Field(default_factory=dict[str, Any])
    timeout: float | None = None
    remove_think: bool | None = None
    #: one of ``provider.reasoning.REASONING_LEVELS``; sent only when the caller names
    #: one, and only to a host that lists ``llm.reasoning_level`` in its ``api_features``
    reasoning_level: str | None = None


class LLMAnswer(Result):
    """A complete answer (the API hands it out as ``LLMInvokeResult``)."""

    message: Message
    usage: LLMTokenUsage | None = None


class LLMStreamItem(Result):
    """One streamed item (the API hands it out as ``LLMStreamEvent``): a chunk, a usage
    report, or both."""

    chunk: MessageChunk | None = None
    usage: LLMTokenUsage | None = None

    @model_validator(mode="after")
    def _chunk_or_usage(self) -> LLMStreamItem:
        if not self.model_fields_set & {"chunk", "usage"}:
            raise ValueError("a stream item carries a chunk or a usage report")
        return self


class TokenCount(Result):
    tokens: Annotated[int, Field(ge=0, strict=True)]


class EmbeddingParams(RunScopedParams):
    embedding_model_uuid: str
    texts: list[str]


class Embeddings(Result):
    vectors: list[list[float]]


class RerankParams(RunScopedParams):
    rerank_model_uuid: str
    query: str
    documents: list[str]
    top_k: int | None = None
    extra_args: dict[str, Any] = Field(default_factory=dict[str, Any])


class Reranked(Result):
    results: list[RerankResult]


class ToolRef(RunScopedParams):
    tool_name: str


class ToolDetailAnswer(Result):
    tool: ToolDetail


class CallToolParams(ToolRef):
    """Two dialects: a run's call sends ``parameters`` (and ``run_id``); a plugin call
    sends ``tool_parameters`` with the ``session`` and ``query_id`` it acts for."""

    parameters: dict[str, Any] | None = None
    tool_parameters: dict[str, Any] | None = None
    session: dict[str, Any] | None = None
    query_id: int | None = None


class ToolCallAnswer(Result):
    """A run's call is answered with ``result``, a plugin call with ``tool_response``;
    only the key that was set is sent."""

    result: Any = None
    tool_response: Any = None

    @model_validator(mode="after")
    def _answered(self) -> ToolCallAnswer:
        if not self.model_fields_set & {"result", "tool_response"}:
            raise ValueError("the answer carries result or tool_response")
        return self

    @model_serializer(mode="wrap")
    def _only_the_answered_key(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        for key in ("result", "tool_response"):
            if key not in self.model_fields_set:
                dumped.pop(key, None)
        return dumped


GET_LLM_MODELS = to_host("get_llm_models", RunScopedParams, LLMModels)
INVOKE_LLM = to_host("invoke_llm", InvokeLLMParams, LLMAnswer, timeout=120)
INVOKE_LLM_STREAM = to_host(
    "invoke_llm_stream",
    InvokeLLMParams,
    LLMStreamItem,
    stream=True,
    timeout=120,
    doc="items carry a chunk, a usage report, or both; the timeout is per item",
)
COUNT_TOKENS = to_host("count_tokens", InvokeLLMParams, TokenCount)
INVOKE_EMBEDDING = to_host("invoke_embedding", EmbeddingParams, Embeddings, timeout=60)
INVOKE_RERANK = to_host("invoke_rerank", RerankParams, Reranked, timeout=60)
CALL_TOOL = to_host("call_tool", CallToolParams, ToolCallAnswer, timeout=180)
GET_TOOL_DETAIL = to_host("get_tool_detail", ToolRef, ToolDetailAnswer)
