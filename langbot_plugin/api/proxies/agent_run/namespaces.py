"""The run API in Protocol v1's namespaces (seed 003, PROTOCOL_V1 section 7):
``api.models``, ``api.tools``, ``api.knowledge``, ``api.history``, ``api.events``,
``api.state``, ``api.storage``, ``api.platform``, ``api.artifacts``.

Each method is the flat method of the same run API it names (``docs/protocol-v1.md``,
"The namespaced run API"); errors carry Protocol v1's seven codes
(:func:`~langbot_plugin.api.entities.builtin.agent_runner.errors.as_protocol_v1`, our
finer code in ``details["code"]``), and what the host does not serve is refused with a
code, never answered by a stand-in. ``api.models.stream`` and
``api.artifacts.open_stream`` may be awaited (as the seed's samples write them) or
iterated directly.
"""

from __future__ import annotations

import base64
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterable,
    Sequence,
)
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

from langbot_plugin.api.entities.builtin.agent_runner.errors import (
    AgentAPIException,
    as_protocol_v1,
)
from langbot_plugin.protocol.run_needs import STORAGE_AREAS

if TYPE_CHECKING:
    from langbot_plugin.api.entities.builtin.agent_runner.page_results import (
        AgentEventRecord,
        EventPage,
        HistoryPage,
        HistorySearchResult,
    )
    from langbot_plugin.api.entities.builtin.agent_runner.protocol_v1 import UploadedArtifact
    from langbot_plugin.api.entities.builtin.provider.message import Message, MessageChunk
    from langbot_plugin.api.entities.builtin.resource.tool import LLMTool
    from langbot_plugin.api.proxies.agent_run.api import AgentRunAPIProxy
    from langbot_plugin.protocol.host_api.artifacts import ArtifactMetadata, ArtifactMount
    from langbot_plugin.protocol.host_api.models import RerankResult, ToolDetail
    from langbot_plugin.protocol.host_api.run_context import (
        StateDeleteResult,
        StateGetResult,
        StateSetResult,
    )

__all__ = [
    "STORAGE_AREAS",
    "STREAM_CHUNK",
    "ArtifactsAPI",
    "EventsAPI",
    "HistoryAPI",
    "KnowledgeAPI",
    "ModelsAPI",
    "PlatformAPI",
    "RunAPINamespaces",
    "StateAPI",
    "StorageAPI",
    "Streamed",
    "ToolsAPI",
]

T = TypeVar("T")

#: Bytes ``api.artifacts.open_stream`` reads a call.
STREAM_CHUNK = 1024 * 1024


async def _v1(call: Awaitable[T]) -> T:
    try:
        return await call
    except AgentAPIException as exc:
        raise as_protocol_v1(exc) from exc


class Streamed(Generic[T]):
    """Items of a streamed call: ``async for x in s`` or ``async for x in await s``."""

    def __init__(self, items: AsyncGenerator[T]) -> None:
        self._items = items

    def __aiter__(self) -> AsyncIterator[T]:
        return self._translated()

    async def _translated(self) -> AsyncGenerator[T]:
        try:
            async for item in self._items:
                yield item
        except AgentAPIException as exc:
            raise as_protocol_v1(exc) from exc
        finally:
            await self._items.aclose()

    def __await__(self) -> Generator[Any, Any, Streamed[T]]:
        return self._ready().__await__()

    async def _ready(self) -> Streamed[T]:
        return self


class _Namespace:
    __slots__ = ("_api",)

    def __init__(self, api: AgentRunAPIProxy) -> None:
        self._api = api


class ModelsAPI(_Namespace):
    """``invoke`` / ``stream`` / ``rerank`` (``invoke_llm``, ``invoke_llm_stream``,
    ``invoke_rerank``)."""

    __slots__ = ()

    async def invoke(
        self,
        model_id: str,
        messages: Sequence[Message],
        tools: Sequence[LLMTool] | None = None,
        extra_args: dict[str, Any] | None = None,
    ) -> Message:
        return await _v1(self._api.invoke_llm(model_id, messages, tools, extra_args))

    def stream(
        self,
        model_id: str,
        messages: Sequence[Message],
        tools: Sequence[LLMTool] | None = None,
        extra_args: dict[str, Any] | None = None,
    ) -> Streamed[MessageChunk]:
        return Streamed(self._api.invoke_llm_stream(model_id, messages, tools, extra_args))

    async def rerank(
        self, model_id: str, query: str, documents: list[str], top_k: int | None = None
    ) -> list[RerankResult]:
        return await _v1(self._api.invoke_rerank(model_id, query, documents, top_k))


class ToolsAPI(_Namespace):
    """``get_detail`` / ``call`` (``get_tool_detail``, ``call_tool``)."""

    __slots__ = ()

    async def get_detail(self, tool_name: str) -> ToolDetail:
        return await _v1(self._api.get_tool_detail(tool_name))

    async def call(self, tool_name: str, parameters: dict[str, Any]) -> Any:
        return await _v1(self._api.call_tool(tool_name, parameters))


class KnowledgeAPI(_Namespace):
    """``retrieve`` (``retrieve_knowledge``)."""

    __slots__ = ()

    async def retrieve(
        self, kb_id: str, query_text: str, top_k: int = 5, filters: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        return await _v1(self._api.retrieve_knowledge(kb_id, query_text, top_k, filters))


class HistoryAPI(_Namespace):
    """``page`` / ``search`` (``history_page``, ``history_search``)."""

    __slots__ = ()

    async def page(  # noqa: PLR0917 -- the seed's signature
        self,
        conversation_id: str | None = None,
        before_cursor: str | None = None,
        after_cursor: str | None = None,
        limit: int = 50,
        direction: str = "backward",
        include_artifacts: bool = False,
    ) -> HistoryPage:
        return await _v1(
            self._api.history_page(
                conversation_id, before_cursor, after_cursor, limit, direction, include_artifacts
            )
        )

    async def search(
        self, query: str, filters: dict[str, Any] | None = None, top_k: int = 10
    ) -> HistorySearchResult:
        return await _v1(self._api.history_search(query, filters, top_k))


class EventsAPI(_Namespace):
    """``get`` / ``page`` (``event_get``, ``event_page``)."""

    __slots__ = ()

    async def get(self, event_id: str) -> AgentEventRecord:
        return await _v1(self._api.event_get(event_id))

    async def page(self, before_cursor: str | None = None, limit: int = 50) -> EventPage:
        return await _v1(self._api.event_page(before_cursor=before_cursor, limit=limit))


class StateAPI(_Namespace):
    """``get`` / ``set`` / ``delete`` (``state_get``, ``state_set``, ``state_delete``)."""

    __slots__ = ()

    async def get(self, scope: str, key: str) -> StateGetResult:
        return await _v1(self._api.state_get(scope, key))

    async def set(self, scope: str, key: str, value: Any) -> StateSetResult:
        return await _v1(self._api.state_set(scope, key, value))

    async def delete(self, scope: str, key: str) -> StateDeleteResult:
        return await _v1(self._api.state_delete(scope, key))


class _StorageCalls(NamedTuple):
    """The flat methods of one storage area."""

    get: Callable[[str], Awaitable[bytes]]
    set: Callable[[str, bytes], Awaitable[None]]
    delete: Callable[[str], Awaitable[None]]
    keys: Callable[[], Awaitable[list[str]]]


class StorageAPI(_Namespace):
    """``get`` / ``set`` / ``delete`` / ``list`` of an ``area``: ``plugin`` and
    ``workspace`` are the plugin's and workspace's storage (``get_plugin_storage``...),
    ``binding`` the storage of the run's bot/pipeline binding (``get_binding_storage``...;
    only a Protocol v1 host grants it, elsewhere it is refused ``unauthorized``)."""

    __slots__ = ()

    def _area(self, area: str) -> _StorageCalls:
        if area not in STORAGE_AREAS:
            raise as_protocol_v1(
                AgentAPIException.of(
                    "invalid_argument",
                    f"area must be one of {', '.join(STORAGE_AREAS)}, not {area!r}",
                    details={"area": area},
                )
            )
        api = self._api  # get_plugin_storage, set_workspace_storage, ... by area
        return _StorageCalls(
            getattr(api, f"get_{area}_storage"),
            getattr(api, f"set_{area}_storage"),
            getattr(api, f"delete_{area}_storage"),
            getattr(api, f"get_{area}_storage_keys"),
        )

    async def get(self, area: str, key: str) -> bytes:
        return await _v1(self._area(area).get(key))

    async def set(self, area: str, key: str, value: bytes | str) -> None:
        data = value.encode() if isinstance(value, str) else value
        return await _v1(self._area(area).set(key, data))

    async def delete(self, area: str, key: str) -> None:
        return await _v1(self._area(area).delete(key))

    async def list(self, area: str, prefix: str | None = None) -> list[str]:
        keys = await _v1(self._area(area).keys())
        return [key for key in keys if prefix is None or key.startswith(prefix)]


class PlatformAPI(_Namespace):
    """``request_action`` (``call_platform_api`` of the run's bot, or of
    ``target["bot_uuid"]``; ``target``'s other keys and ``payload`` are the action's
    parameters). The host decides whether the action is allowed."""

    __slots__ = ()

    async def request_action(
        self,
        action: str,
        target: dict[str, Any] | None = None,
        payload: dict[str, Any] | None = None,
    ) -> Any:
        where = dict(target or {})
        conversation = self._api.ctx.conversation
        bot = where.pop("bot_uuid", None) or (conversation.bot_id if conversation else None)
        if not isinstance(bot, str) or not bot:
            raise as_protocol_v1(
                AgentAPIException.of(
                    "invalid_argument",
                    "request_action needs target['bot_uuid'] when the run has no bot",
                    details={"action": action},
                )
            )
        return await _v1(self._api.call_platform_api(bot, action, {**where, **(payload or {})}))


class ArtifactsAPI(_Namespace):
    """``metadata`` / ``read_range`` / ``open_stream`` (``artifact_metadata``,
    ``artifact_bytes``; the stream reads :data:`STREAM_CHUNK` bytes a call), and ours:
    ``upload`` (``artifact_upload``) and ``mount`` (``artifact_mount``). Only a
    Protocol v1 host serves them (``available_apis.artifact_*``); elsewhere they are
    refused ``unauthorized``."""

    __slots__ = ()

    async def metadata(self, artifact_id: str) -> ArtifactMetadata:
        return await _v1(self._api.artifact_metadata(artifact_id))

    async def read_range(self, artifact_id: str, offset: int = 0, length: int = 65536) -> bytes:
        return await _v1(self._api.artifact_bytes(artifact_id, offset, length))

    async def mount(self, artifact_id: str) -> ArtifactMount:
        """Show the artifact read-only in the run's Box; ``answer.path`` is where."""
        return await _v1(self._api.artifact_mount(artifact_id))

    async def upload(
        self, content: bytes | Iterable[bytes] | AsyncIterable[bytes]
    ) -> UploadedArtifact:
        """Send an artifact too large for one result in pieces; yield
        ``artifact_created(run_id, uploaded, ...)`` to commit it."""
        return await _v1(self._api.artifact_upload(content))

    def open_stream(self, artifact_id: str) -> Streamed[bytes]:
        return Streamed(self._chunks(artifact_id))

    async def _chunks(self, artifact_id: str) -> AsyncGenerator[bytes]:
        offset = 0
        while True:
            chunk = await self._api.artifact_read(artifact_id, offset, STREAM_CHUNK)
            data = base64.b64decode(chunk.content_base64)
            if data:
                yield data
            offset += len(data)
            if chunk.eof or not data:
                return


class RunAPINamespaces:
    """The namespaces as attributes of the run API (mixed into the run proxy and into
    ``ctx.api``, so each call goes through that object's own methods)."""

    __slots__ = ()

    def _face(self) -> AgentRunAPIProxy:
        return self  # type: ignore[return-value]  # pyright: ignore[reportReturnType]

    @property
    def models(self) -> ModelsAPI:
        return ModelsAPI(self._face())

    @property
    def tools(self) -> ToolsAPI:
        return ToolsAPI(self._face())

    @property
    def knowledge(self) -> KnowledgeAPI:
        return KnowledgeAPI(self._face())

    @property
    def history(self) -> HistoryAPI:
        return HistoryAPI(self._face())

    @property
    def events(self) -> EventsAPI:
        return EventsAPI(self._face())

    @property
    def state(self) -> StateAPI:
        return StateAPI(self._face())

    @property
    def storage(self) -> StorageAPI:
        return StorageAPI(self._face())

    @property
    def platform(self) -> PlatformAPI:
        return PlatformAPI(self._face())

    @property
    def artifacts(self) -> ArtifactsAPI:
        return ArtifactsAPI(self._face())
