"""The Box's audit: what happened in which session, bounded and queryable.

Each session create and delete, command, managed process start and stop, file write,
export and removal, and skill a session mounts is one :class:`AuditEvent` (what each
carries: docs/box.md, *Audit*). The runtime keeps the last :data:`MAX_EVENTS` in memory
(older ones are counted in ``dropped``), each as its JSON text: a few hundred bytes,
where a model instance held for each would be about 1.6 KB (16 MB at the bound).
"""

from __future__ import annotations

import datetime as dt
import itertools
import shlex
from collections import deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from langbot_plugin.protocol.spec import Params, Result

if TYPE_CHECKING:  # the host library imports the models here without the daemon's code
    from box_runtime.sessions import SessionKey, Tenant

__all__ = ["MAX_EVENTS", "AuditEvent", "AuditKind", "AuditPage", "AuditQuery", "BoxAudit"]

#: Events the runtime keeps (all tenants together); older ones are dropped, counted.
MAX_EVENTS = 10_000
#: Characters of a command line kept in an event.
MAX_COMMAND_CHARS = 1024
#: Paths named in one file event.
MAX_PATHS = 64

AuditKind = Literal[
    "session.create",
    "session.delete",
    "exec",
    "process.start",
    "process.stop",
    "files.write",
    "files.export",
    "files.remove",
    "skill.mount",
]


class AuditEvent(Result):
    """One audited thing a session did (fields that do not apply are left out)."""

    seq: int
    at: str
    kind: AuditKind
    session_id: str
    instance_uuid: str | None = None
    workspace_uuid: str | None = None
    backend: str | None = None
    image: str | None = None
    run_id: str | None = None
    command: str | None = None
    exit_code: int | None = None
    status: str | None = None
    duration_ms: int | None = None
    stdout_bytes: int | None = None
    stderr_bytes: int | None = None
    process_id: str | None = None
    paths: list[str] | None = None
    bytes: int | None = None
    skill: str | None = None
    reason: str | None = None
    error: str | None = None


class AuditQuery(Params):
    """``box_get_audit``: one session's events, or the whole workspace's."""

    session_id: str | None = None
    after_seq: int = Field(default=0, ge=0)
    limit: int = Field(default=200, ge=1, le=1000)


class AuditPage(Result):
    events: list[AuditEvent]
    #: the last sequence number handed out (ask again with ``after_seq`` of the last event)
    last_seq: int
    #: events no longer kept (the log is bounded)
    dropped: int


def _command(cmd: str | list[str]) -> str:
    text = cmd if isinstance(cmd, str) else shlex.join(cmd)
    return text if len(text) <= MAX_COMMAND_CHARS else text[:MAX_COMMAND_CHARS] + "..."


#: One kept event: its owner (instance, workspace), seq, session id and JSON text.
_Kept = tuple[tuple[str, str] | None, int, str, str]
#: Fields the kept tuple holds (the owner's ids are shared with the session's tenant).
_KEPT_APART = {"instance_uuid", "workspace_uuid"}


class BoxAudit:
    """The runtime's bounded event log (see the module docstring)."""

    def __init__(self, max_events: int = MAX_EVENTS) -> None:
        #: (owner's instance and workspace, seq, session id, the event's JSON)
        self._events: deque[_Kept] = deque(maxlen=max_events)
        self._seq = itertools.count(1)
        self.last_seq = 0
        self.dropped = 0
        #: skills each live session has mounted (a skill is recorded once per session)
        self._mounted: dict[SessionKey, set[str]] = {}
        #: called with each event as it is recorded (the Box's metrics)
        self.listeners: list[Callable[[AuditEvent], None]] = []

    def record(self, kind: AuditKind, key: SessionKey, **fields: object) -> AuditEvent:
        if "command" in fields and fields["command"] is not None:
            fields["command"] = _command(fields["command"])  # type: ignore[arg-type]
        paths = fields.get("paths")
        if isinstance(paths, list) and len(paths) > MAX_PATHS:  # pyright: ignore[reportUnknownArgumentType]
            fields["paths"] = paths[:MAX_PATHS]
        self.last_seq = next(self._seq)
        tenant = key.tenant
        event = AuditEvent.model_validate(
            {
                "seq": self.last_seq,
                "at": dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds"),
                "kind": kind,
                "session_id": key.session_id,
                "instance_uuid": tenant.instance_uuid if tenant else None,
                "workspace_uuid": tenant.workspace_uuid if tenant else None,
                **{k: v for k, v in fields.items() if v is not None},
            }
        )
        if len(self._events) == self._events.maxlen:
            self.dropped += 1
        owner = (tenant.instance_uuid, tenant.workspace_uuid) if tenant else None
        self._events.append(
            (
                owner,
                event.seq,
                event.session_id,
                event.model_dump_json(exclude=_KEPT_APART, exclude_none=True),
            )
        )
        for listener in self.listeners:
            listener(event)
        return event

    def mounted(self, key: SessionKey, skills: Iterable[str], **fields: object) -> None:
        """Record each skill ``key``'s session has not mounted before."""
        seen = self._mounted.setdefault(key, set())
        for skill in skills:
            if skill not in seen:
                seen.add(skill)
                self.record("skill.mount", key, skill=skill, **fields)

    def forget(self, key: SessionKey) -> None:
        """The session is gone: a new one of the same id mounts its skills afresh."""
        self._mounted.pop(key, None)

    def query(self, tenant: Tenant | None, query: AuditQuery) -> AuditPage:
        """The tenant's events (one workspace, every generation), oldest first."""

        wanted = (tenant.instance_uuid, tenant.workspace_uuid) if tenant else None
        events: list[AuditEvent] = []
        for owner, seq, session_id, text in self._events:
            if seq <= query.after_seq or owner != wanted:
                continue
            if query.session_id is not None and session_id != query.session_id:
                continue
            event = AuditEvent.model_validate_json(text)
            event.instance_uuid, event.workspace_uuid = owner or (None, None)
            events.append(event)
            if len(events) >= query.limit:
                break
        return AuditPage(events=events, last_seq=self.last_seq, dropped=self.dropped)
