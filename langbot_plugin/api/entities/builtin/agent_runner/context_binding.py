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

import functools
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, Protocol, TypeVar

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

P = ParamSpec("P")
R = TypeVar("R")


class ReplyStreamHandle(Protocol):
    """One explicit streaming reply: each update replaces the whole text so far."""

    async def update(self, text: str) -> Mapping[str, Any]: ...


class RunContextAPI(RunNamespaces, Protocol):
    """The run-scoped host API a context delegates to: the flat 0.7 calls and Protocol
    v1's namespaces (``ctx.api.models.invoke(...)``...: :class:`RunNamespaces`)."""

    async def call_tool(self, tool_name: str, parameters: dict[str, Any]) -> Any: ...
    async def list_tools(self) -> list[dict[str, Any]]: ...
    async def get_prompt(self) -> list[dict[str, Any]]:
        """The host's effective prompt for this run."""
        ...

    async def reply_message(
        self, message_chain: MessageChain, quote_origin: bool = False
    ) -> Any: ...
    def reply_stream(self) -> AbstractAsyncContextManager[ReplyStreamHandle]: ...
    async def reply_files(self, file_ids: list[str]) -> Any:
        """Send exported files (their ``BoxFile.id``) as a reply."""
        ...

    async def bind_box(self, box_id: str) -> BoxBinding:
        """Bind a Box of the workspace to this run (once; a run cannot switch)."""
        ...

    async def import_box_attachments(
        self, attachment_ids: list[str] | None = None
    ) -> list[BoxFile]:
        """Copy the given input attachments (by ``ref``; all when None) into the Box."""
        ...

    async def export_box_files(self, paths: list[str]) -> list[BoxFile]:
        """Export files of the bound Box (absolute paths); nothing is sent yet."""
        ...

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
        ...

    async def history_search(
        self, query: str, filters: dict[str, Any] | None = None, top_k: int = 10
    ) -> HistorySearchResult:
        """Transcript items matching ``query``."""
        ...

    async def event_get(self, event_id: str) -> AgentEventRecord:
        """One recorded event."""
        ...

    async def event_page(
        self,
        conversation_id: str | None = None,
        event_types: list[str] | None = None,
        before_cursor: str | None = None,
        limit: int = 50,
    ) -> EventPage:
        """A page of recorded events."""
        ...

    async def steering_pull(
        self, mode: str = "all", limit: int | None = None
    ) -> SteeringPullResult:
        """Follow-up input queued for this run."""
        ...

    async def state_get(self, scope: str, key: str) -> Mapping[str, Any]:
        """``{"value": ...}`` of a state key."""
        ...

    async def state_set(self, scope: str, key: str, value: Any) -> Mapping[str, Any]:
        """Store a JSON value under a state key."""
        ...

    async def state_delete(self, scope: str, key: str) -> Mapping[str, Any]:
        """Delete a state key."""
        ...

    async def state_list(
        self, scope: str, prefix: str | None = None, limit: int = 100
    ) -> Mapping[str, Any]:
        """The keys of a state scope."""
        ...

    async def run_get(self, run_id: str | None = None) -> AgentRun:
        """A run record (this run by default)."""
        ...

    async def run_list(
        self,
        conversation_id: str | None = None,
        statuses: list[str] | None = None,
        before_cursor: str | None = None,
        limit: int = 50,
    ) -> RunPage:
        """A page of the run records this run may see."""
        ...

    async def run_events_page(
        self,
        run_id: str | None = None,
        before_cursor: str | None = None,
        after_cursor: str | None = None,
        limit: int = 50,
        direction: str = "forward",
    ) -> RunEventPage:
        """A page of a run's recorded result events."""
        ...

    async def run_cancel(self, run_id: str | None = None, reason: str | None = None) -> AgentRun:
        """Ask the host to cancel a run (this run by default)."""
        ...

    async def run_append_result(self, result: AgentRunResult) -> AgentRunEvent:
        """Record a result in the run ledger without streaming it."""
        ...

    async def run_finalize(
        self, run_id: str | None = None, status: str | None = None, reason: str | None = None
    ) -> AgentRun:
        """Set a run's final status in the ledger."""
        ...


def _forwarded(
    method: Callable[Concatenate[Any, P], Awaitable[R]],
) -> Callable[Concatenate[Any, P], Awaitable[R]]:
    """A context method that is ``self.api.<the same name>(...)``, with the signature and
    documentation of ``method``."""
    name = method.__name__

    @functools.wraps(method)
    async def forwarded(self: Any, *args: P.args, **kwargs: P.kwargs) -> R:
        return await getattr(self.api, name)(*args, **kwargs)

    return forwarded


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

    get_prompt = _forwarded(RunContextAPI.get_prompt)

    # ------------------------------------------------------------------ Box and files

    bind_box = _forwarded(RunContextAPI.bind_box)
    import_box_attachments = _forwarded(RunContextAPI.import_box_attachments)
    export_box_files = _forwarded(RunContextAPI.export_box_files)
    reply_files = _forwarded(RunContextAPI.reply_files)

    # ------------------------------------------------------------------ history and events

    history_page = _forwarded(RunContextAPI.history_page)
    history_search = _forwarded(RunContextAPI.history_search)
    event_get = _forwarded(RunContextAPI.event_get)
    event_page = _forwarded(RunContextAPI.event_page)
    steering_pull = _forwarded(RunContextAPI.steering_pull)

    # ------------------------------------------------------------------ state

    state_get = _forwarded(RunContextAPI.state_get)
    state_set = _forwarded(RunContextAPI.state_set)
    state_delete = _forwarded(RunContextAPI.state_delete)
    state_list = _forwarded(RunContextAPI.state_list)

    # ------------------------------------------------------------------ run ledger

    run_get = _forwarded(RunContextAPI.run_get)
    run_list = _forwarded(RunContextAPI.run_list)
    run_events_page = _forwarded(RunContextAPI.run_events_page)
    run_cancel = _forwarded(RunContextAPI.run_cancel)
    run_append_result = _forwarded(RunContextAPI.run_append_result)
    run_finalize = _forwarded(RunContextAPI.run_finalize)
