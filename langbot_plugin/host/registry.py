"""The run session registry: which runs exist, whose they are, and whether they are live.

The host registers a run just before it sends ``run_runner``, with its owner, runner,
grants, scope and deadline. :meth:`RunRegistry.authorize` checks each run-scoped call:
the run exists (``run_not_live``), the caller is its plugin (``run_not_owned``, before
liveness, so another plugin learns nothing), it still runs (``run_not_live``) and is
within its deadline (``deadline_exceeded``). :meth:`RunRegistry.request_cancel` sets
:attr:`RunSession.cancel_requested`, which the run's driver watches;
:meth:`RunRegistry.expire` times out overdue runs and forgets the oldest finished ones
beyond ``retain_finished``. Finished runs stay readable until forgotten but never
authorize calls again. The registry lives in memory.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio

from langbot_plugin.host.deliveries import Delivery
from langbot_plugin.host.errors import RunDeadlineError, RunNotLiveError, RunNotOwnedError
from langbot_plugin.host.grants import STEERING_FLAG, RunGrants, RunScope
from langbot_plugin.host.limits import DEFAULT_RATE_LIMIT, RunRateLimit, TokenBucket
from langbot_plugin.host.steering import SteeringQueue
from langbot_plugin.rpc.errors import ConflictError, NotFoundError
from langbot_plugin.rpc.redaction import redact_data

__all__ = ["TERMINAL_STATUSES", "RunRegistry", "RunSession"]

RUNNING = "running"
#: Statuses a run never leaves.
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled", "timeout"})

Clock = Callable[[], float]


def _epoch(value: float | None) -> int | None:
    return None if value is None else int(value)


@dataclass(eq=False)
class RunSession:
    """One run: identity, frozen grants, lifecycle and its ledger of result events."""

    run_id: str
    plugin_identity: str
    runner_id: str
    grants: RunGrants
    scope: RunScope
    deadline_at: float | None
    created_at: float
    ledger_id: int
    event_id: str | None = None
    status: str = RUNNING
    status_reason: str | None = None
    finished_at: float | None = None
    cancel_requested_at: float | None = None
    usage: dict[str, Any] | None = None
    metadata: dict[str, Any] = field(default_factory=dict[str, Any])
    #: The effective prompt the host prepared for the run (what ``get_prompt`` returns).
    prompt: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    steering: SteeringQueue = field(default_factory=SteeringQueue)
    events: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    #: Replies and files the run delivered besides its result stream, in order.
    deliveries: list[Delivery] = field(default_factory=list[Delivery])
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    #: the run's host-call budget (``host.limits``), made at its first call
    bucket: TokenBucket | None = None
    #: The platform actions the runner declared (Protocol v1), executed when offered.
    platform_actions: frozenset[str] = frozenset()

    @property
    def finished(self) -> bool:
        return self.status in TERMINAL_STATUSES

    def past_deadline(self, now: float) -> bool:
        return self.deadline_at is not None and now > self.deadline_at

    def state_key(self, scope: str) -> str | None:
        """This run's key for a persistent-state scope (``None`` if it has none)."""
        return self.scope.state_key(scope, self.runner_id)

    def record(self) -> dict[str, Any]:
        """The run as the host's ledger answers it (the ``AgentRun`` shape)."""
        started = int(self.created_at)
        return {
            "id": self.ledger_id,
            "run_id": self.run_id,
            "event_id": self.event_id,
            "agent_id": None,
            "binding_id": self.scope.binding_id,
            "runner_id": self.runner_id,
            "conversation_id": self.scope.conversation_id,
            "thread_id": self.scope.thread_id,
            "workspace_id": self.scope.workspace_id,
            "bot_id": self.scope.bot_id,
            "status": self.status,
            "status_reason": self.status_reason,
            "queue_name": None,
            "priority": None,
            "requested_runtime_id": None,
            "claimed_by_runtime_id": None,
            "claim_lease_expires_at": None,
            "dispatch_attempts": None,
            "last_claimed_at": None,
            "created_at": started,
            "created_at_ms": round(self.created_at * 1000),
            "started_at_ms": round(self.created_at * 1000),
            "finished_at_ms": None if self.finished_at is None else round(self.finished_at * 1000),
            "started_at": started,
            "finished_at": _epoch(self.finished_at),
            "updated_at": _epoch(self.finished_at or self.cancel_requested_at) or started,
            "deadline_at": _epoch(self.deadline_at),
            "cancel_requested_at": _epoch(self.cancel_requested_at),
            "usage": self.usage,
            "cost": None,
            "metadata": dict(self.metadata),
        }


class RunRegistry:
    """Runs by id, with authorization and lifecycle (see the module docstring)."""

    def __init__(
        self,
        *,
        clock: Clock = time.time,
        retain_finished: int = 1000,
        rate_limit: RunRateLimit | None = DEFAULT_RATE_LIMIT,
    ) -> None:
        self.clock = clock
        self.retain_finished = retain_finished
        #: host calls a run may make (``None``: unlimited); see :mod:`.limits`
        self.rate_limit = rate_limit
        self._runs: dict[str, RunSession] = {}
        self._ids = 0
        self._event_ids = 0

    def __contains__(self, run_id: object) -> bool:
        return run_id in self._runs

    def __iter__(self) -> Iterator[RunSession]:
        return iter(list(self._runs.values()))

    # ------------------------------------------------------------------ lifecycle

    def register(
        self,
        run_id: str,
        *,
        plugin_identity: str,
        runner_id: str,
        grants: RunGrants,
        scope: RunScope | None = None,
        deadline_at: float | None = None,
        event_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        prompt: list[dict[str, Any]] | None = None,
    ) -> RunSession:
        """Open a live run; a ``run_id`` already known is a :class:`ConflictError`."""
        if not run_id:
            raise ValueError("run_id must not be empty")
        if not plugin_identity or "/" not in plugin_identity:
            raise ValueError(f"plugin_identity must be 'author/name', got {plugin_identity!r}")
        if run_id in self._runs:
            raise ConflictError(f"run {run_id} is already registered", details={"run_id": run_id})
        self._ids += 1
        session = RunSession(
            run_id=run_id,
            plugin_identity=plugin_identity,
            runner_id=runner_id,
            grants=grants,
            scope=scope or RunScope(),
            deadline_at=deadline_at,
            created_at=self.clock(),
            ledger_id=self._ids,
            event_id=event_id,
            metadata=dict(metadata or {}),
            prompt=list(prompt or []),
        )
        self._runs[run_id] = session
        return session

    def get(self, run_id: str) -> RunSession | None:
        return self._runs.get(run_id)

    def require(self, run_id: str) -> RunSession:
        """The run (live or finished) or :class:`NotFoundError`."""
        session = self._runs.get(run_id)
        if session is None:
            raise NotFoundError(f"Run {run_id} not found", details={"run_id": run_id})
        return session

    def authorize(self, run_id: object, caller_identity: object) -> RunSession:
        """The live run ``run_id`` owned by ``caller_identity``, or the refusal."""
        session = self._runs.get(run_id) if isinstance(run_id, str) else None
        if session is None:
            raise RunNotLiveError(
                f"Run session {run_id} not found or expired",
                details={"run_id": run_id, "status": "unknown"},
            )
        if not isinstance(caller_identity, str) or not caller_identity:
            raise RunNotOwnedError(
                f"caller_plugin_identity is required for run_id {run_id}",
                details={"run_id": run_id},
            )
        if caller_identity != session.plugin_identity:
            raise RunNotOwnedError(
                f"Plugin identity mismatch: caller {caller_identity} is not authorized "
                f"for run_id {run_id}",
                details={"run_id": run_id, "caller": caller_identity},
            )
        if session.finished:
            raise RunNotLiveError(
                f"Run session {run_id} is {session.status}",
                details={"run_id": run_id, "status": session.status},
            )
        if session.past_deadline(self.clock()):
            raise RunDeadlineError(
                f"Run session {run_id} passed its deadline",
                details={"run_id": run_id, "deadline_at": session.deadline_at},
            )
        if self.rate_limit is not None:
            if session.bucket is None:
                session.bucket = TokenBucket(self.rate_limit)
            session.bucket.take(session.run_id)
        return session

    def finish(
        self,
        run_id: str,
        status: str,
        reason: str | None = None,
        *,
        usage: dict[str, Any] | None = None,
    ) -> RunSession:
        """End a run with a terminal ``status``; ending an ended run changes nothing."""
        if status not in TERMINAL_STATUSES:
            raise ValueError(f"{status!r} is not a terminal status")
        session = self.require(run_id)
        if session.finished:
            return session
        session.status = status
        session.status_reason = reason or session.status_reason
        session.finished_at = self.clock()
        if usage is not None:
            session.usage = usage
        session.steering.close()
        session.cancel_requested.set()  # anyone still watching the stream lets go
        return session

    def request_cancel(self, run_id: str, reason: str | None = None) -> RunSession:
        """Ask for a run to stop; the stream's driver sees ``cancel_requested`` and
        closes the stream, which ends the run as ``cancelled``. Idempotent."""
        session = self.require(run_id)
        if not session.finished and session.cancel_requested_at is None:
            session.cancel_requested_at = self.clock()
            session.status_reason = reason or session.status_reason
            session.cancel_requested.set()
        return session

    def expire(self) -> list[RunSession]:
        """Time out running runs past their deadline; forget the oldest finished runs
        beyond ``retain_finished``. Returns the runs timed out now."""
        now = self.clock()
        expired = [s for s in self._runs.values() if not s.finished and s.past_deadline(now)]
        for session in expired:
            self.finish(session.run_id, "timeout", "deadline exceeded")
        finished = [s for s in self._runs.values() if s.finished]
        excess = len(finished) - self.retain_finished
        if excess > 0:
            finished.sort(key=lambda s: s.ledger_id)
            for session in finished[:excess]:
                del self._runs[session.run_id]
        return expired

    # ------------------------------------------------------------------ ledger

    def record_event(
        self,
        session: RunSession,
        *,
        sequence: int,
        kind: str,
        data: dict[str, Any],
        usage: dict[str, Any] | None = None,
        source: str = "runner",
        metadata: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Append one result event (the ``AgentRunEvent`` shape, ``data`` redacted) to the
        run's ledger."""
        self._event_ids += 1
        event = {
            "id": self._event_ids,
            "run_id": session.run_id,
            "sequence": sequence,
            "type": kind,
            "data": redact_data(data),
            "usage": usage,
            "created_at": int(self.clock()),
            "source": source,
            "metadata": dict(metadata or {}),
        }
        session.events.append(event)
        return event

    def active(self) -> list[RunSession]:
        """Running runs, oldest first."""
        return sorted((s for s in self._runs.values() if not s.finished), key=lambda s: s.ledger_id)

    def steering_target(self, scope: RunScope, runner_id: str) -> RunSession | None:
        """The oldest running run of ``runner_id`` in the same conversation that may
        pull steering input, if any."""
        now = self.clock()
        for session in self.active():
            if (
                session.runner_id == runner_id
                and session.scope.conversation_id is not None
                and session.scope.conversation_id == scope.conversation_id
                and (session.scope.thread_id, session.scope.bot_id, session.scope.workspace_id)
                == (scope.thread_id, scope.bot_id, scope.workspace_id)
                and STEERING_FLAG in session.grants.apis
                and not session.past_deadline(now)
            ):
                return session
        return None
