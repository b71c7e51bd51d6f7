"""The type of Protocol v1's run API namespaces (seed 003, PROTOCOL_V1 section 7), as
``ctx.api`` offers them: ``ctx.api.models.invoke(...)``, ``ctx.api.state.get(...)``...

:class:`RunNamespaces` says what ``api.models``, ``api.tools``, ``api.knowledge``,
``api.history``, ``api.events``, ``api.state``, ``api.storage``, ``api.platform`` and
``api.artifacts`` offer, so a runner that writes the seed's calls on ``ctx.api`` is
checked by a type checker. The SDK's run API
(``langbot_plugin.api.proxies.agent_run.namespaces``) implements them; it is checked
against these protocols wherever a context is activated with it.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Generator, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from langbot_plugin.api.entities.builtin.agent_runner.page_results import (
        AgentEventRecord,
        EventPage,
        HistoryPage,
        HistorySearchResult,
    )
    from langbot_plugin.api.entities.builtin.agent_runner.protocol_v1 import UploadedArtifact
    from langbot_plugin.api.entities.builtin.agent_runner.run_answers import (
        ArtifactMetadata,
        ArtifactMount,
        RerankResult,
        StateDeleteResult,
        StateGetResult,
        StateSetResult,
        ToolDetail,
    )
    from langbot_plugin.api.entities.builtin.provider.message import Message, MessageChunk
    from langbot_plugin.api.entities.builtin.resource.tool import LLMTool

__all__ = [
    "RunArtifacts",
    "RunEvents",
    "RunHistory",
    "RunKnowledge",
    "RunModels",
    "RunNamespaces",
    "RunPlatform",
    "RunState",
    "RunStorage",
    "RunTools",
    "StreamedItems",
]

T_co = TypeVar("T_co", covariant=True)


class StreamedItems(Protocol[T_co]):
    """Items of a streamed call: ``async for x in s`` or ``async for x in await s``."""

    def __aiter__(self) -> AsyncIterator[T_co]: ...
    def __await__(self) -> Generator[Any, Any, StreamedItems[T_co]]: ...


class RunModels(Protocol):
    async def invoke(
        self,
        model_id: str,
        messages: Sequence[Message],
        tools: Sequence[LLMTool] | None = None,
        extra_args: dict[str, Any] | None = None,
    ) -> Message: ...
    def stream(
        self,
        model_id: str,
        messages: Sequence[Message],
        tools: Sequence[LLMTool] | None = None,
        extra_args: dict[str, Any] | None = None,
    ) -> StreamedItems[MessageChunk]: ...
    async def rerank(
        self, model_id: str, query: str, documents: list[str], top_k: int | None = None
    ) -> list[RerankResult]: ...


class RunTools(Protocol):
    async def get_detail(self, tool_name: str) -> ToolDetail: ...
    async def call(self, tool_name: str, parameters: dict[str, Any]) -> Any: ...


class RunKnowledge(Protocol):
    async def retrieve(
        self, kb_id: str, query_text: str, top_k: int = 5, filters: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]: ...


class RunHistory(Protocol):
    async def page(  # noqa: PLR0917 -- the seed's signature
        self,
        conversation_id: str | None = None,
        before_cursor: str | None = None,
        after_cursor: str | None = None,
        limit: int = 50,
        direction: str = "backward",
        include_artifacts: bool = False,
    ) -> HistoryPage: ...
    async def search(
        self, query: str, filters: dict[str, Any] | None = None, top_k: int = 10
    ) -> HistorySearchResult: ...


class RunEvents(Protocol):
    async def get(self, event_id: str) -> AgentEventRecord: ...
    async def page(self, before_cursor: str | None = None, limit: int = 50) -> EventPage: ...


class RunState(Protocol):
    async def get(self, scope: str, key: str) -> StateGetResult: ...
    async def set(self, scope: str, key: str, value: Any) -> StateSetResult: ...
    async def delete(self, scope: str, key: str) -> StateDeleteResult: ...


class RunStorage(Protocol):
    """``area``: ``plugin``, ``workspace`` or ``binding``."""

    async def get(self, area: str, key: str) -> bytes: ...
    async def set(self, area: str, key: str, value: bytes | str) -> None: ...
    async def delete(self, area: str, key: str) -> None: ...
    async def list(self, area: str, prefix: str | None = None) -> list[str]: ...


class RunPlatform(Protocol):
    async def request_action(
        self,
        action: str,
        target: dict[str, Any] | None = None,
        payload: dict[str, Any] | None = None,
    ) -> Any: ...


class RunArtifacts(Protocol):
    async def metadata(self, artifact_id: str) -> ArtifactMetadata: ...
    async def read_range(self, artifact_id: str, offset: int = 0, length: int = 65536) -> bytes: ...
    async def mount(self, artifact_id: str) -> ArtifactMount: ...
    async def upload(
        self, content: bytes | Iterable[bytes] | AsyncIterable[bytes]
    ) -> UploadedArtifact: ...
    def open_stream(self, artifact_id: str) -> StreamedItems[bytes]: ...


class RunNamespaces(Protocol):
    """Protocol v1's namespaces of the run API (module docstring)."""

    @property
    def models(self) -> RunModels: ...
    @property
    def tools(self) -> RunTools: ...
    @property
    def knowledge(self) -> RunKnowledge: ...
    @property
    def history(self) -> RunHistory: ...
    @property
    def events(self) -> RunEvents: ...
    @property
    def state(self) -> RunState: ...
    @property
    def storage(self) -> RunStorage: ...
    @property
    def platform(self) -> RunPlatform: ...
    @property
    def artifacts(self) -> RunArtifacts: ...
