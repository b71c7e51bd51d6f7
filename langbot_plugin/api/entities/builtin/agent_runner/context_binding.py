"""What a run context calls while its run is active (the 0.7 bound methods).

During a run the runner component binds the context to the run-scoped API
(:meth:`~.context.AgentRunContext.activate`); ``ctx.state_get(...)``,
``ctx.history_page(...)``, ``ctx.bind_box(...)`` and the others are then the same calls
as ``ctx.api.<name>(...)``, with the same grants and errors. :class:`RunContextAPI`
says what such an API offers (with Protocol v1's namespaces,
:mod:`~langbot_plugin.api.entities.builtin.agent_runner.run_namespaces`); the SDK's run
proxy is one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Protocol

from langbot_plugin.api.entities.builtin.agent_runner.box import BoxBinding, BoxFile
from langbot_plugin.api.entities.builtin.agent_runner.page_results import (
    AgentEventRecord,
    EventPage,
    HistoryPage,
    HistorySearchResult,
)
from langbot_plugin.api.entities.builtin.agent_runner.result import AgentRunResult
from langbot_plugin.api.entities.builtin.agent_runner.run_ledger import (
    AgentRun,
    AgentRunEvent,
    RunEventPage,
    RunPage,
)
from langbot_plugin.api.entities.builtin.agent_runner.run_namespaces import RunNamespaces
from langbot_plugin.api.entities.builtin.agent_runner.steering import SteeringPullResult
from langbot_plugin.api.entities.builtin.platform.message import MessageChain

__all__ = ["ReplyStreamHandle", "ResultSink", "RunContextAPI", "RunContextCalls"]

#: Where ``ctx.log`` puts its ``processor.log`` results: the run's result stream.
ResultSink = Callable[[AgentRunResult], Awaitable[None]]


class ReplyStreamHandle(Protocol):
    """One explicit streaming reply: each update replaces the whole text so far."""

    async def update(self, text: str) -> Mapping[str, Any]: ...


class RunContextAPI(RunNamespaces, Protocol):
    """The run-scoped host API a context delegates to: the flat 0.7 calls and Protocol
    v1's namespaces (``ctx.api.models.invoke(...)``...: :class:`RunNamespaces`)."""

    async def call_tool(self, tool_name: str, parameters: dict[str, Any]) -> Any: ...
    async def list_tools(self) -> list[dict[str, Any]]: ...
    async def get_prompt(self) -> list[dict[str, Any]]: ...
    async def reply_message(
        self, message_chain: MessageChain, quote_origin: bool = False
    ) -> Any: ...
    def reply_stream(self) -> AbstractAsyncContextManager[ReplyStreamHandle]: ...
    async def reply_files(self, file_ids: list[str]) -> Any: ...
    async def bind_box(self, box_id: str) -> BoxBinding: ...
    async def import_box_attachments(
        self, attachment_ids: list[str] | None = None
    ) -> list[BoxFile]: ...
    async def export_box_files(self, paths: list[str]) -> list[BoxFile]: ...
    async def history_page(  # noqa: PLR0917 -- reference signature
        self,
        conversation_id: str | None = None,
        before_cursor: str | None = None,
        after_cursor: str | None = None,
        limit: int = 50,
        direction: str = "backward",
        include_attachments: bool = False,
    ) -> HistoryPage: ...
    async def history_search(
        self, query: str, filters: dict[str, Any] | None = None, top_k: int = 10
    ) -> HistorySearchResult: ...
    async def event_get(self, event_id: str) -> AgentEventRecord: ...
    async def event_page(
        self,
        conversation_id: str | None = None,
        event_types: list[str] | None = None,
        before_cursor: str | None = None,
        limit: int = 50,
    ) -> EventPage: ...
    async def steering_pull(
        self, mode: str = "all", limit: int | None = None
    ) -> SteeringPullResult: ...
    async def state_get(self, scope: str, key: str) -> Mapping[str, Any]: ...
    async def state_set(self, scope: str, key: str, value: Any) -> Mapping[str, Any]: ...
    async def state_delete(self, scope: str, key: str) -> Mapping[str, Any]: ...
    async def state_list(
        self, scope: str, prefix: str | None = None, limit: int = 100
    ) -> Mapping[str, Any]: ...
    async def run_get(self, run_id: str | None = None) -> AgentRun: ...
    async def run_list(
        self,
        conversation_id: str | None = None,
        statuses: list[str] | None = None,
        before_cursor: str | None = None,
        limit: int = 50,
    ) -> RunPage: ...
    async def run_events_page(
        self,
        run_id: str | None = None,
        before_cursor: str | None = None,
        after_cursor: str | None = None,
        limit: int = 50,
        direction: str = "forward",
    ) -> RunEventPage: ...
    async def run_cancel(
        self, run_id: str | None = None, reason: str | None = None
    ) -> AgentRun: ...
    async def run_append_result(self, result: AgentRunResult) -> AgentRunEvent: ...
    async def run_finalize(
        self, run_id: str | None = None, status: str | None = None, reason: str | None = None
    ) -> AgentRun: ...


class RunContextCalls:
    """The context's pass-through methods; each is ``self.api.<same name>``."""

    if TYPE_CHECKING:

        @property
        def api(self) -> RunContextAPI: ...

    # ------------------------------------------------------------------ tools and prompt

    async def get_available_tools(self) -> list[dict[str, Any]]:
        """The tools this run may call, with their names and JSON parameter schemas."""
        return await self.api.list_tools()

    async def call_tool(self, tool_name: str, parameters: dict[str, Any] | None = None) -> Any:
        """Call a granted event, platform or plugin tool."""
        return await self.api.call_tool(tool_name, parameters or {})

    async def get_prompt(self) -> list[dict[str, Any]]:
        """The host's effective prompt for this run."""
        return await self.api.get_prompt()

    # ------------------------------------------------------------------ Box and files

    async def bind_box(self, box_id: str) -> BoxBinding:
        """Bind a Box of the workspace to this run (once; a run cannot switch)."""
        return await self.api.bind_box(box_id)

    async def import_box_attachments(
        self, attachment_ids: list[str] | None = None
    ) -> list[BoxFile]:
        """Copy the given input attachments (by ``ref``; all when None) into the Box."""
        return await self.api.import_box_attachments(attachment_ids)

    async def export_box_files(self, paths: list[str]) -> list[BoxFile]:
        """Export files of the bound Box (absolute paths); nothing is sent yet."""
        return await self.api.export_box_files(paths)

    async def reply_files(self, file_ids: list[str]) -> Any:
        """Send exported files (their ``BoxFile.id``) as a reply."""
        return await self.api.reply_files(file_ids)

    # ------------------------------------------------------------------ history and events

    async def history_page(  # noqa: PLR0917 -- reference signature
        self,
        conversation_id: str | None = None,
        before_cursor: str | None = None,
        after_cursor: str | None = None,
        limit: int = 50,
        direction: str = "backward",
        include_attachments: bool = False,
    ) -> HistoryPage:
        """A page of the conversation's transcript."""
        return await self.api.history_page(
            conversation_id=conversation_id,
            before_cursor=before_cursor,
            after_cursor=after_cursor,
            limit=limit,
            direction=direction,
            include_attachments=include_attachments,
        )

    async def history_search(
        self, query: str, filters: dict[str, Any] | None = None, top_k: int = 10
    ) -> HistorySearchResult:
        """Transcript items matching ``query``."""
        return await self.api.history_search(query=query, filters=filters, top_k=top_k)

    async def event_get(self, event_id: str) -> AgentEventRecord:
        """One recorded event."""
        return await self.api.event_get(event_id=event_id)

    async def event_page(
        self,
        conversation_id: str | None = None,
        event_types: list[str] | None = None,
        before_cursor: str | None = None,
        limit: int = 50,
    ) -> EventPage:
        """A page of recorded events."""
        return await self.api.event_page(
            conversation_id=conversation_id,
            event_types=event_types,
            before_cursor=before_cursor,
            limit=limit,
        )

    async def steering_pull(
        self, mode: str = "all", limit: int | None = None
    ) -> SteeringPullResult:
        """Follow-up input queued for this run."""
        return await self.api.steering_pull(mode=mode, limit=limit)

    # ------------------------------------------------------------------ state

    async def state_get(self, scope: str, key: str) -> Mapping[str, Any]:
        """``{"value": ...}`` of a state key."""
        return await self.api.state_get(scope=scope, key=key)

    async def state_set(self, scope: str, key: str, value: Any) -> Mapping[str, Any]:
        """Store a JSON value under a state key."""
        return await self.api.state_set(scope=scope, key=key, value=value)

    async def state_delete(self, scope: str, key: str) -> Mapping[str, Any]:
        """Delete a state key."""
        return await self.api.state_delete(scope=scope, key=key)

    async def state_list(
        self, scope: str, prefix: str | None = None, limit: int = 100
    ) -> Mapping[str, Any]:
        """The keys of a state scope."""
        return await self.api.state_list(scope=scope, prefix=prefix, limit=limit)

    # ------------------------------------------------------------------ run ledger

    async def run_get(self, run_id: str | None = None) -> AgentRun:
        """A run record (this run by default)."""
        return await self.api.run_get(run_id=run_id)

    async def run_list(
        self,
        conversation_id: str | None = None,
        statuses: list[str] | None = None,
        before_cursor: str | None = None,
        limit: int = 50,
    ) -> RunPage:
        """A page of the run records this run may see."""
        return await self.api.run_list(
            conversation_id=conversation_id,
            statuses=statuses,
            before_cursor=before_cursor,
            limit=limit,
        )

    async def run_events_page(
        self,
        run_id: str | None = None,
        before_cursor: str | None = None,
        after_cursor: str | None = None,
        limit: int = 50,
        direction: str = "forward",
    ) -> RunEventPage:
        """A page of a run's recorded result events."""
        return await self.api.run_events_page(
            run_id=run_id,
            before_cursor=before_cursor,
            after_cursor=after_cursor,
            limit=limit,
            direction=direction,
        )

    async def run_cancel(self, run_id: str | None = None, reason: str | None = None) -> AgentRun:
        """Ask the host to cancel a run (this run by default)."""
        return await self.api.run_cancel(run_id=run_id, reason=reason)

    async def run_append_result(self, result: AgentRunResult) -> AgentRunEvent:
        """Record a result in the run ledger without streaming it."""
        return await self.api.run_append_result(result=result)

    async def run_finalize(
        self, run_id: str | None = None, status: str | None = None, reason: str | None = None
    ) -> AgentRun:
        """Set a run's final status in the ledger."""
        return await self.api.run_finalize(run_id=run_id, status=status, reason=reason)
