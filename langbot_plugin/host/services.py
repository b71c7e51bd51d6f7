"""The service table: the run-scoped runtime -> host actions, authorized and answered.

:class:`RunServices` serves what a runner reaches through ``AgentRunAPIProxy`` (the
actions :meth:`RunServices._register` lists; the admin run API is
:mod:`langbot_plugin.host.service_admin`). :meth:`RunServices.dispatcher` puts the
table in front of the host's other actions, whose run-scoped calls are authorized first
(:mod:`langbot_plugin.host.gate`).

Every call is checked before anything is read or written: ``run_id`` present, the run
live and the caller's (:meth:`RunRegistry.authorize`; the caller is
``caller_plugin_identity``, set by the plugin runtime, or ``identify=``), the API on in
``available_apis``, and the call within the run's scope (its conversation, its state
keys, runs of the same runner). Answers have the keys the 4.11.2 host sends; refusals
are :mod:`langbot_plugin.host.errors`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from langbot_plugin.api.entities.builtin.agent_runner.page_results import (
    AgentEventRecord,
    EventPage,
    HistoryPage,
    HistorySearchResult,
)
from langbot_plugin.api.entities.builtin.agent_runner.steering import SteeringPullResult
from langbot_plugin.host.artifacts import ArtifactStore
from langbot_plugin.host.attachments import RunAttachments
from langbot_plugin.host.audit import AuditLog
from langbot_plugin.host.binding_storage import BindingStorage
from langbot_plugin.host.box_files import BoxFiles
from langbot_plugin.host.errors import ResourceNotGrantedError, RunNotLiveError
from langbot_plugin.host.event_log import EventLogStore
from langbot_plugin.host.grants import STATE_SCOPES
from langbot_plugin.host.paging import PageWindow
from langbot_plugin.host.registry import RunRegistry, RunSession
from langbot_plugin.host.service_admin import (
    AdminAccess,
    ListRunners,
    RuntimeRegistry,
    register_admin_actions,
)
from langbot_plugin.host.state_store import StateStore
from langbot_plugin.host.transcript import TranscriptStore
from langbot_plugin.protocol.host_api import box, messaging, run_ledger
from langbot_plugin.protocol.host_api import run_context as rc
from langbot_plugin.protocol.host_api.common import RunScopedParams
from langbot_plugin.protocol.run_needs import api_flag
from langbot_plugin.protocol.spec import ActionSpec, ActionTable
from langbot_plugin.rpc import Dispatcher, RequestContext
from langbot_plugin.rpc.errors import InvalidParamsError, NotFoundError

__all__ = ["Identify", "RunServices", "not_a_run", "payload_identity"]

#: Who is calling: returns the caller's ``author/name`` (or ``None`` if unknown).
Identify = Callable[[RequestContext], str | None]


def payload_identity(ctx: RequestContext) -> str | None:
    """The ``caller_plugin_identity`` the runtime put into the payload."""
    value = ctx.data.get("caller_plugin_identity")
    return value if isinstance(value, str) else None


def not_a_run(ctx: RequestContext) -> RunNotLiveError:
    """The refusal of a run-only action called without a run."""
    return RunNotLiveError(
        f"{ctx.request.action} exists only for runs: name a live run of this plugin",
        details={"action": ctx.request.action, "run_id": None},
    )


class RunServices:
    """Serves the run-scoped actions from a registry and the host's stores."""

    def __init__(
        self,
        registry: RunRegistry,
        state: StateStore,
        transcript: TranscriptStore,
        events: EventLogStore,
        *,
        identify: Identify = payload_identity,
        audit: AuditLog | None = None,
        files: BoxFiles | None = None,
        attachments: RunAttachments | None = None,
        admins: AdminAccess | None = None,
        runners: ListRunners | None = None,
        artifacts: ArtifactStore | None = None,
        binding_storage: BindingStorage | None = None,
    ) -> None:
        self.audit = audit
        #: The ``binding`` storage area of runs granted it (Protocol v1).
        self.binding_storage = binding_storage
        #: The artifacts runs created (``artifact_metadata`` / ``artifact_read``).
        self.artifacts = artifacts
        #: The plugins this host names as admins (the admin run API, the ledger across runs).
        self.admins = admins if admins is not None else AdminAccess()
        #: The external runtimes registered through the admin run API.
        self.runtimes = RuntimeRegistry(registry.clock)
        self._runners = runners
        self.registry = registry
        self.state = state
        self.transcript = transcript
        self.events = events
        self.identify = identify
        self.files = files if files is not None else BoxFiles()
        #: The runs' input files (``import_box_attachments`` copies them into a Box).
        self.attachments = attachments if attachments is not None else RunAttachments()
        self.table = ActionTable(sparse=True)  # answers shaped like the 4.11.2 host's
        self._register()

    # ------------------------------------------------------------------ plumbing

    def session(
        self, run_id: object, ctx: RequestContext, api: ActionSpec[Any, Any] | None = None
    ) -> RunSession:
        """The live run ``run_id`` of the caller, with ``api``'s flag of ``available_apis``
        enabled (or the refusal)."""
        if run_id is None or run_id == "":
            raise not_a_run(ctx)
        session = self.registry.authorize(run_id, self.identify(ctx))
        if api is not None:
            session.grants.require_api(api_flag(api), session.run_id)
        return session

    def dispatcher(self, inner: Dispatcher | None = None, *, strict: bool = True) -> ActionTable:
        """This table in front of ``inner``, whose run-scoped calls are gated
        (``strict=False``: calls naming a run this registry never saw pass unchecked)."""
        from langbot_plugin.host.gate import gated

        return gated(self, inner, strict=strict)

    def _register(self) -> None:
        from langbot_plugin.host import service_files as files
        from langbot_plugin.host import service_ledger as ledger

        t = self.table
        t.add(rc.STATE_GET, self.state_get)
        t.add(rc.STATE_SET, self.state_set)
        t.add(rc.STATE_DELETE, self.state_delete)
        t.add(rc.STATE_LIST, self.state_list)
        t.add(rc.HISTORY_PAGE, self.history_page)
        t.add(rc.HISTORY_SEARCH, self.history_search)
        t.add(rc.EVENT_GET, self.event_get)
        t.add(rc.EVENT_PAGE, self.event_page)
        t.add(rc.STEERING_PULL, self.steering_pull)
        t.add(rc.GET_PROMPT, self.get_prompt)
        t.add(run_ledger.RUN_GET, partial(ledger.run_get, self))
        t.add(run_ledger.RUN_LIST, partial(ledger.run_list, self))
        t.add(run_ledger.RUN_EVENTS_PAGE, partial(ledger.run_events_page, self))
        t.add(run_ledger.RUN_CANCEL, partial(ledger.run_cancel, self))
        t.add(box.EXPORT_BOX_FILES, partial(files.export_box_files, self))
        t.add(messaging.CALL_PLATFORM_API, partial(files.call_platform_api, self))
        register_admin_actions(t, self, self.runtimes, self._runners)
        if self.artifacts is not None:
            from langbot_plugin.host.service_artifacts import register_artifact_actions

            register_artifact_actions(t, self, self.artifacts)
        if self.binding_storage is not None:
            self.binding_storage.register(t, self.session)

    @staticmethod
    def conversation(session: RunSession, requested: str | None) -> None:
        """Refuse a conversation other than the run's own."""
        if requested and requested != session.scope.conversation_id:
            raise ResourceNotGrantedError(
                f"Conversation {requested} is not accessible by this run",
                details={"kind": "conversation", "resource": requested, "run_id": session.run_id},
            )

    # ------------------------------------------------------------------ state

    def _scope_key(self, session: RunSession, scope: str) -> str:
        if scope not in STATE_SCOPES:
            raise InvalidParamsError(
                f"scope must be one of {', '.join(STATE_SCOPES)}, not {scope!r}",
                details={"scope": scope},
            )
        details = {"kind": "state_scope", "resource": scope, "run_id": session.run_id}
        if scope not in session.grants.state_scopes:
            raise ResourceNotGrantedError(
                f'Scope "{scope}" is not enabled by binding policy', details=details
            )
        key = session.state_key(scope)
        if key is None:
            raise ResourceNotGrantedError(
                f'Scope key not available for scope "{scope}" (the run has no {scope} identity)',
                details=details,
            )
        return key

    async def state_get(self, p: rc.StateKeyParams, ctx: RequestContext) -> rc.StateGetResult:
        session = self.session(p.run_id, ctx, rc.STATE_GET)
        key = self._scope_key(session, p.scope)
        return rc.StateGetResult(value=await self.state.get(key, p.key))

    async def state_set(self, p: rc.StateSetParams, ctx: RequestContext) -> rc.StateSetResult:
        session = self.session(p.run_id, ctx, rc.STATE_SET)
        await self.set_state(session, self._scope_key(session, p.scope), p.scope, p.key, p.value)
        return rc.StateSetResult(success=True)

    async def set_state(
        self, session: RunSession, scope_key: str, scope: str, key: str, value: Any
    ) -> None:
        """Keep a run's state value (``state_set`` or a ``state.updated`` result), and
        audit an external harness pointer (``external.*`` state) the run kept."""
        conversation = session.scope.conversation_ref() if scope == "conversation" else None
        await self.state.set(
            scope_key,
            key,
            value,
            scope=scope,
            runner_id=session.runner_id,
            conversation_ref=conversation,
        )
        if self.audit is not None and key.startswith("external."):
            detail = {"scope": scope, "key": key, "value": value}
            self.audit.record(session.run_id, "session", resource=key, detail=detail)

    async def state_delete(self, p: rc.StateKeyParams, ctx: RequestContext) -> rc.StateDeleteResult:
        session = self.session(p.run_id, ctx, rc.STATE_DELETE)
        deleted = await self.state.delete(self._scope_key(session, p.scope), p.key)
        return rc.StateDeleteResult(success=deleted)

    async def state_list(self, p: rc.StateListParams, ctx: RequestContext) -> rc.StateListResult:
        session = self.session(p.run_id, ctx, rc.STATE_LIST)
        key = self._scope_key(session, p.scope)
        keys, has_more = await self.state.list_keys(key, p.prefix, p.limit if p.limit > 0 else 100)
        return rc.StateListResult(keys=keys, has_more=has_more)

    # ------------------------------------------------------------------ history

    async def history_page(self, p: rc.HistoryPageParams, ctx: RequestContext) -> HistoryPage:
        session = self.session(p.run_id, ctx, rc.HISTORY_PAGE)
        self.conversation(session, p.conversation_id)
        window = PageWindow.of(p.before_cursor, p.after_cursor, p.limit, p.direction)
        page = await self.transcript.page(
            session.scope, window, include_attachments=p.include_attachments
        )
        return HistoryPage.model_validate(page)

    async def history_search(
        self, p: rc.HistorySearchParams, ctx: RequestContext
    ) -> HistorySearchResult:
        session = self.session(p.run_id, ctx, rc.HISTORY_SEARCH)
        requested = p.filters.get("conversation_id")
        self.conversation(session, requested if isinstance(requested, str) else None)
        items = await self.transcript.search(
            session.scope,
            p.query,
            roles=_strings(p.filters.get("roles"), "roles"),
            item_types=_strings(p.filters.get("item_types"), "item_types"),
            top_k=p.top_k,
        )
        return HistorySearchResult.model_validate(
            {"items": items, "total_count": len(items), "query": p.query}
        )

    # ------------------------------------------------------------------ events

    async def event_get(self, p: rc.EventGetParams, ctx: RequestContext) -> AgentEventRecord:
        session = self.session(p.run_id, ctx, rc.EVENT_GET)
        found = await self.events.get(p.event_id)
        if found is None:
            raise NotFoundError(f"Event {p.event_id} not found", details={"event_id": p.event_id})
        record, recorded_by = found
        scope = session.scope
        visible = recorded_by == session.run_id or (
            scope.sees_conversation(record["conversation_id"], record["thread_id"])
            and scope.bot_id in (None, record["bot_id"])
            and scope.workspace_id in (None, record["workspace_id"])
        )
        if not visible:
            raise ResourceNotGrantedError(
                f"Event {p.event_id} is not accessible by this run",
                details={"kind": "event", "resource": p.event_id, "run_id": session.run_id},
            )
        return AgentEventRecord.model_validate(record)

    async def event_page(self, p: rc.EventPageParams, ctx: RequestContext) -> EventPage:
        session = self.session(p.run_id, ctx, rc.EVENT_PAGE)
        self.conversation(session, p.conversation_id)
        window = PageWindow.of(p.before_cursor, p.after_cursor, p.limit)
        page = await self.events.page(session.scope, window, event_types=p.event_types)
        return EventPage.model_validate(page)

    # ------------------------------------------------------------------ steering, prompt

    async def steering_pull(
        self, p: rc.SteeringPullParams, ctx: RequestContext
    ) -> SteeringPullResult:
        session = self.session(p.run_id, ctx, rc.STEERING_PULL)
        items = session.steering.pull(p.mode, p.limit)
        for item in items:
            event = item.get("event")
            source_event = event.get("event_id") if isinstance(event, dict) else None
            await self.events.append(
                session.scope,
                event_type="steering.injected",
                source="runner",
                input_summary=f"steering injected from {source_event}",
                run_id=session.run_id,
                runner_id=session.runner_id,
                metadata={"steering": {"source_event_id": source_event, "pull_mode": p.mode}},
            )
        return SteeringPullResult.model_validate({"items": items})

    async def get_prompt(self, p: RunScopedParams, ctx: RequestContext) -> rc.Prompt:
        session = self.session(p.run_id, ctx, rc.GET_PROMPT)
        return rc.Prompt(prompt=[dict(message) for message in session.prompt])


def _strings(value: object, name: str) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidParamsError(f"filters.{name} must be a list of strings")
    return [str(v) for v in value]
