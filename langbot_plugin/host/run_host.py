"""The host's run machinery in one object: start a run, drive its stream, serve its calls.

:class:`RunHost` owns the registry, the SQLite stores and the service table, and
does what a host does around one ``run_runner`` call:

* :meth:`RunHost.start_run` records the incoming message and registers the run with its
  grants frozen; send ``started.context`` as the ``context`` of ``run_runner``.
* :meth:`RunHost.drive` consumes the result stream until the run ends (its result, a
  cancel, the deadline) and pulls the runtime's refusals into the run's audit.
* :meth:`RunHost.dispatcher` serves the run-scoped runtime -> host actions, and the
  admin run API to the plugins ``admins=`` names (``{"author/name":
  ["agent_run:admin", "runtime:admin"]}``; :mod:`langbot_plugin.host.service_admin`).
* With a Box (``box=``, a ``box_runtime.client.BoxClient``) and a run started with
  ``box_session=``, the run may export files of that session
  (:mod:`langbot_plugin.host.box_files`) and deliver them with ``reply_files`` or a
  ``message.completed`` carrying ``file_ids``; what was delivered is in
  :attr:`RunOutcome.deliveries`. A ``message.completed`` naming a handle that is not
  the run's, or was already delivered, fails the run (nothing of it is delivered).

What each result does to the stores is :mod:`langbot_plugin.host.run_recorder`; stop,
clear and steer are :mod:`langbot_plugin.host.run_control`. Identities and what stop,
clear and restart do (see also ``docs/``):

=====================  ======================================  ========================
identity               owner, lifetime                         stop / clear / restart
=====================  ======================================  ========================
conversation           the host; as long as the chat exists    kept / history and
                                                               conversation state
                                                               dropped / kept (SQLite)
run (``run_id``)       the host; one ``run_runner`` stream     ends ``cancelled`` /
                                                               n.a. / forgotten
runner state           the host, per scope key; until cleared  kept / conversation
                                                               scope dropped / kept
=====================  ======================================  ========================
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import AsyncIterable, Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import anyio

from langbot_plugin.host.artifacts import ArtifactStore
from langbot_plugin.host.attachments import InputFile, RunAttachments
from langbot_plugin.host.audit import AuditLog
from langbot_plugin.host.audit_feed import (
    RuntimeAuditSource,
    audit_run_end,
    pull_runtime_audit,
    record_runtime_audit,
)
from langbot_plugin.host.binding_storage import BindingStorage, grant_binding_storage
from langbot_plugin.host.box_files import BoxFileAccess, BoxFiles
from langbot_plugin.host.context_policy import apply_context_policy
from langbot_plugin.host.errors import BoxFilesError
from langbot_plugin.host.event_log import EventLogStore
from langbot_plugin.host.grants import STATE_SCOPES, RunGrants, RunScope
from langbot_plugin.host.limits import (
    DEFAULT_RATE_LIMIT,
    Retention,
    RunRateLimit,
    SweepReport,
    sweep,
)
from langbot_plugin.host.platform_actions import (
    EDIT_MESSAGE,
    PlatformActions,
    declared_actions,
    edit_delivered_message,
)
from langbot_plugin.host.registry import RunRegistry, RunSession
from langbot_plugin.host.results import NormalizedResult, ResultNormalizer
from langbot_plugin.host.run_context import build_run_context
from langbot_plugin.host.run_control import clear_conversation, steer_run, stop_conversation
from langbot_plugin.host.run_outcome import OnResult, RunOutcome, StartedRun
from langbot_plugin.host.run_recorder import RunRecorder
from langbot_plugin.host.service_admin import AdminAccess, ListRunners
from langbot_plugin.host.services import Identify, RunServices, payload_identity
from langbot_plugin.host.sqlite import HostDatabase
from langbot_plugin.host.state_store import StateStore
from langbot_plugin.host.transcript import TranscriptStore
from langbot_plugin.host.truncation import DEFAULT_MESSAGE_LIMIT
from langbot_plugin.protocol.run_audit import RunAuditEntry
from langbot_plugin.protocol.runners import secret_config_values
from langbot_plugin.protocol.table import ActionTable
from langbot_plugin.rpc import Dispatcher
from langbot_plugin.rpc.errors import RPCError, RPCTimeoutError
from langbot_plugin.rpc.redaction import mark_secret

__all__ = ["OnResult", "RunHost", "RunOutcome", "StartedRun"]

logger = logging.getLogger("langbot_plugin.host")


class RunHost:
    """Registry + stores + service table (see the module docstring)."""

    def __init__(
        self,
        database: HostDatabase | str | os.PathLike[str] = ":memory:",
        *,
        clock: Callable[[], float] = time.time,
        identify: Identify = payload_identity,
        langbot_version: str = "v4.11.2",
        max_message_bytes: int = DEFAULT_MESSAGE_LIMIT,
        retain_finished: int = 1000,
        box: BoxFileAccess | None = None,
        admins: Mapping[str, Iterable[str]] | None = None,
        runners: ListRunners | None = None,
        rate_limit: RunRateLimit | None = DEFAULT_RATE_LIMIT,
        retention: Retention | None = None,
    ) -> None:
        self.db = database if isinstance(database, HostDatabase) else HostDatabase(database)
        self.clock = clock
        self.langbot_version = langbot_version
        self.max_message_bytes = max_message_bytes
        #: how long runner state, transcripts and audits are kept (:meth:`sweep`)
        self.retention = retention if retention is not None else Retention()
        self.registry = RunRegistry(
            clock=clock, retain_finished=retain_finished, rate_limit=rate_limit
        )
        self.state = StateStore(self.db)
        self.transcript = TranscriptStore(self.db)
        self.events = EventLogStore(self.db)
        self.audit = AuditLog(self.db)
        self.files = BoxFiles(box)
        self.attachments = RunAttachments()
        #: What forgets a run's per-run state when it ends (a Box service adds its own).
        self.releases: list[Callable[[str], None]] = [self.files.release, self.attachments.release]
        #: What runs created with ``artifact.created`` (Protocol v1).
        self.artifacts = ArtifactStore(self.db, clock=clock)
        #: The ``binding`` storage area (Protocol v1), for runners that declare it.
        self.binding_storage = BindingStorage(self.db)
        self.services = RunServices(
            self.registry,
            self.state,
            self.transcript,
            self.events,
            identify=identify,
            audit=self.audit,
            files=self.files,
            attachments=self.attachments,
            admins=AdminAccess(admins),
            runners=runners,
            artifacts=self.artifacts,
            binding_storage=self.binding_storage,
        )
        #: The platform actions this host executes for runs that declare them.
        self.platform_actions = PlatformActions()
        self.platform_actions.handlers[EDIT_MESSAGE] = edit_delivered_message(self.registry)
        self.recorder = RunRecorder(self.services, actions=self.platform_actions)

    async def sweep(self, now: float | None = None) -> SweepReport:
        """Delete runner state, transcripts and audit entries past :attr:`retention`,
        and artifacts past their own expiry."""
        await self.audit.flush()
        now = self.clock() if now is None else now
        report = await sweep(self.db, self.retention, now=now)
        report = replace(report, artifacts=await self.artifacts.purge(now))
        if report != SweepReport():
            logger.info(
                "swept expired records: %d runner state, %d transcript, %d audit, %d artifact",
                report.runner_state,
                report.transcript,
                report.audit,
                report.artifacts,
            )
        return report

    async def sweeping(self) -> None:
        """Sweep every ``retention.interval_sec`` for as long as the host runs (run it
        in the host's task group)."""
        while True:
            await self.sweep()
            await anyio.sleep(self.retention.interval_sec)

    def dispatcher(self, inner: Dispatcher | None = None, *, strict: bool = True) -> ActionTable:
        """The run-scoped actions, in front of ``inner`` (gated by run authorization;
        see :func:`~langbot_plugin.host.gate.gated` for ``strict``)."""
        return self.services.dispatcher(inner, strict=strict)

    def close(self) -> None:
        self.db.close()

    # ------------------------------------------------------------------ start

    async def start_run(
        self,
        plugin_identity: str,
        runner_name: str,
        text: str | None = "hello",
        *,
        runner_id: str | None = None,
        state_scopes: Iterable[str] | None = None,
        prompt: list[dict[str, Any]] | None = None,
        binding_id: str | None = None,
        record_input: bool = True,
        secrets: Iterable[str] = (),
        config_schema: list[dict[str, Any]] | None = None,
        box_session: str | None = None,
        input_files: Sequence[InputFile] = (),
        declaration: Mapping[str, Any] | None = None,
        **context_options: Any,
    ) -> StartedRun:
        """Record the input, build the context and register the run.

        ``context_options`` go to :func:`build_run_context` (``resources``,
        ``available_apis``, ``timeout``/``deadline_at``, ``launcher_id``, ``config``...).
        ``state_scopes`` limits the state scopes the run may use (default: all);
        ``prompt`` is what ``get_prompt`` answers; ``box_session`` is the existing Box
        session whose files the run may export; ``input_files`` are the files the event
        carried (listed with a ``ref`` in ``input.attachments``, held by the host for
        ``import_box_attachments``). ``declaration`` is the runner's Protocol v1
        declaration (the ``protocol_v1`` of its ``list_runners`` entry): its ``context``
        policy decides what is inlined (:mod:`langbot_plugin.host.context_policy`).
        ``secrets`` (values the host marks
        secret) and the values of ``config_schema`` fields declared ``type: secret`` (the
        runner's ``spec.config``, as ``list_runners`` gives it) are redacted from the
        transcript, the event log, the ledger, the audit and errors from now on.
        """
        mark_secret(*secrets, *secret_config_values(config_schema, context_options.get("config")))
        self.registry.expire()  # time out overdue runs, forget the oldest finished ones
        context_options.setdefault("langbot_version", self.langbot_version)
        context = build_run_context(text, clock=self.clock, **context_options)
        grant_binding_storage(context["resources"], declaration)
        scope = RunScope.from_context(context, binding_id)
        runner = runner_id or f"plugin:{plugin_identity}/{runner_name}"
        access = context["context"]
        event = context["event"]
        if record_input and scope.conversation_id is not None:
            await self.events.append(
                scope,
                event_type=event["event_type"],
                source=event["source"],
                event_id=event["event_id"],
                event_time=event["event_time"],
                actor_name=context["actor"]["actor_name"],
                input_summary=text,
                run_id=context["run_id"],
                runner_id=runner,
            )
            await self.transcript.append(
                scope,
                role="user",
                content=text,
                content_json={"role": "user", "content": context["input"]["contents"]},
                event_id=event["event_id"],
                metadata={"actor_type": scope.actor_type, "actor_id": scope.actor_id},
            )
        latest, count = await self.transcript.latest(scope)
        access.update(
            latest_cursor=latest,
            transcript_seq=int(latest) if latest is not None else None,
            has_history_before=count > (1 if record_input else 0),
            event_seq=await self.events.latest_seq(scope),
        )
        await apply_context_policy(context, declaration, self.transcript, scope)
        scopes = tuple(STATE_SCOPES if state_scopes is None else state_scopes)
        context["state"] = await self._snapshot(scope, runner, scopes)
        if input_files:
            listed = self.attachments.add(context["run_id"], input_files)
            context["input"]["attachments"].extend(listed)
        deadline = context["runtime"]["deadline_at"]
        session = self.registry.register(
            context["run_id"],
            plugin_identity=plugin_identity,
            runner_id=runner,
            grants=RunGrants.from_context(
                context["resources"], access["available_apis"], state_scopes=scopes
            ),
            scope=scope,
            deadline_at=float(deadline) if deadline is not None else None,
            event_id=event["event_id"],
            prompt=prompt,
        )
        self.audit.record(
            session.run_id,
            "run.started",
            detail={
                "plugin": plugin_identity,
                "runner_id": runner,
                "grants": session.grants.to_dict(),
                "deadline_at": session.deadline_at,
                "conversation_id": scope.conversation_id,
                "thread_id": scope.thread_id,
            },
        )
        session.platform_actions = declared_actions(declaration)
        if box_session is not None:
            self.files.bind(session.run_id, box_session)
        return StartedRun(context, session)

    async def _snapshot(
        self, scope: RunScope, runner_id: str, scopes: tuple[str, ...]
    ) -> dict[str, dict[str, Any]]:
        snapshot: dict[str, dict[str, Any]] = {name: {} for name in STATE_SCOPES}
        for name in scopes:
            key = scope.state_key(name, runner_id)
            if key is not None:
                snapshot[name] = await self.state.snapshot(key)
        if "conversation" in scopes and scope.conversation_id is not None:
            snapshot["conversation"].setdefault("external.conversation_id", scope.conversation_id)
        return snapshot

    # ------------------------------------------------------------------ drive

    async def drive(
        self,
        run: StartedRun | RunSession,
        items: AsyncIterable[dict[str, Any]],
        *,
        on_result: OnResult | None = None,
        runtime_audit: RuntimeAuditSource | None = None,
    ) -> RunOutcome:
        """Consume ``items`` (the ``run_runner`` stream) until it ends.

        ``on_result`` sees each accepted result as it arrives (to deliver deltas).
        ``runtime_audit`` (``PluginRuntimeClient.get_run_audit``) is asked, once the
        stream has closed, for the refusals the runtime and the SDK made for the run;
        they join its audit (:mod:`langbot_plugin.host.audit_feed`).
        After the terminal result the stream is still read to its end (later items are
        dropped), so the runner's own cleanup is not cut short; a cancel request or the
        deadline closes it early. If ``drive`` itself is cancelled or fails, the run
        still ends (``cancelled`` / ``failed``).
        """
        session = run.session if isinstance(run, StartedRun) else run
        normalizer = ResultNormalizer(session.run_id, max_message_bytes=self.max_message_bytes)
        outcome = RunOutcome(session.run_id, "running", "")
        try:
            failure, timed_out = await self._consume(session, items, normalizer, outcome, on_result)
            ended = self._close(session, normalizer, failure, timed_out)
            if ended is not None:
                await self.recorder.apply(session, ended, outcome, on_result)
            if not outcome.messages and normalizer.final_text and session.scope.conversation_id:
                await self.recorder.remember(session, normalizer.final_text, None)
        except BaseException as exc:
            if not session.finished:
                cancelled = isinstance(exc, anyio.get_cancelled_exc_class())
                reason = "the host stopped driving the run" if cancelled else repr(exc)
                self.registry.finish(session.run_id, "cancelled" if cancelled else "failed", reason)
            raise
        finally:
            for release in self.releases:
                release(session.run_id)
        self.registry.finish(
            session.run_id,
            normalizer.status,
            (normalizer.error or {}).get("error"),
            usage=normalizer.usage,
        )
        outcome.status = normalizer.status
        outcome.text = normalizer.final_text
        outcome.error = normalizer.error
        outcome.usage = normalizer.usage
        outcome.dropped = list(normalizer.dropped)
        outcome.deliveries = list(session.deliveries)
        runtime = await pull_runtime_audit(self.audit, session.run_id, runtime_audit)
        await audit_run_end(self.audit, session, outcome, runtime)
        return outcome

    def record_runtime_audit(
        self, run_id: str, entries: Iterable[Mapping[str, Any] | RunAuditEntry]
    ) -> None:
        """:func:`~.audit_feed.record_runtime_audit` into this host's audit."""
        record_runtime_audit(self.audit, run_id, entries)

    async def _consume(
        self,
        session: RunSession,
        items: AsyncIterable[dict[str, Any]],
        normalizer: ResultNormalizer,
        outcome: RunOutcome,
        on_result: OnResult | None,
    ) -> tuple[BaseException | None, bool]:
        """Read the stream until it ends, is cancelled or times out; always close it.
        Returns the stream's failure (if any) and whether the deadline stopped it."""
        failure: BaseException | None = None
        timed_out = False
        remaining = float("inf")
        if session.deadline_at is not None:
            remaining = max(session.deadline_at - self.clock(), 0.0)
        try:
            async with anyio.create_task_group() as tg:

                async def watch_cancel() -> None:
                    await session.cancel_requested.wait()
                    tg.cancel_scope.cancel()

                tg.start_soon(watch_cancel)
                with anyio.move_on_after(remaining) as deadline:
                    try:
                        async for item in items:
                            result = normalizer.accept(item)
                            if result is not None:
                                await self.recorder.attach_files(session, result)
                                await self.recorder.apply(session, result, outcome, on_result)
                    except (RPCError, TimeoutError, ConnectionError) as exc:
                        failure = exc
                timed_out = deadline.cancelled_caught
                tg.cancel_scope.cancel()
        finally:
            closer = getattr(items, "aclose", None)
            if closer is not None:
                with anyio.CancelScope(shield=True):
                    await closer()
        return failure, timed_out

    def _close(
        self,
        session: RunSession,
        normalizer: ResultNormalizer,
        failure: BaseException | None,
        timed_out: bool,
    ) -> NormalizedResult | None:
        if normalizer.terminal:
            return None
        if session.cancel_requested.is_set():
            reason = session.status_reason or "cancelled by the host"
            return normalizer.close("cancelled", reason, "cancelled")
        if isinstance(failure, RPCTimeoutError | TimeoutError):
            return normalizer.close("failed", str(failure), "runner.timeout", retryable=True)
        if isinstance(failure, BoxFilesError):
            return normalizer.close("failed", failure.message, failure.code)
        if failure is not None:
            return normalizer.close(
                "failed", str(failure) or type(failure).__name__, "runner.error"
            )
        if timed_out:
            return normalizer.close(
                "timeout", "the run passed its deadline", "runner.timeout", retryable=True
            )
        return normalizer.close("failed", "the runner ended without a result", "runner.no_result")

    # ------------------------------------------------------------------ control
    # (what stop, clear and steer do: langbot_plugin.host.run_control)

    def cancel(self, run_id: str, reason: str | None = None) -> RunSession:
        """Stop a run (what a user's "stop" does): its driver closes the stream."""
        return self.registry.request_cancel(run_id, reason or "cancelled by the host")

    async def steer(self, run_id: str, text: str) -> bool:
        """Hand a follow-up message to a live run that may pull steering input;
        ``False`` if it cannot take it (finished, no grant, queue full)."""
        return await steer_run(
            self.registry, self.events, self.transcript, run_id, text, clock=self.clock
        )

    async def clear_conversation(self, target: RunSession | RunScope) -> int:
        """What "clear" does (seed 002; :func:`~.run_control.clear_conversation`); live
        runs are not stopped (that is :meth:`stop_conversation`)."""
        return await clear_conversation(self.transcript, self.state, target)

    def stop_conversation(
        self, target: RunSession | RunScope, reason: str = "stopped by the user"
    ) -> list[RunSession]:
        """What "stop" does (seed 002; :func:`~.run_control.stop_conversation`)."""
        return stop_conversation(self.registry, target, reason)
