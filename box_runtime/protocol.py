"""Every action the Box serves, declared once with its parameter and result models.

Both dialects use the same names for the shared actions. The 0.7 host (LangBot
4.11.x on PyPI) also sends ``box_get_storage_analysis``; the 0.5 host (the
dev/4.11.x source tree) also sends the skill-store actions, which a later release
implements: until then they answer with the code ``not_supported``. The
managed-process actions serve both: a 0.5 host names no ``process_id`` (its one
process per session is ``default``), a 0.7 host runs many per session.

``__ping`` and the other control actions are served by the RPC session itself.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import Field, field_validator

from box_runtime.models import BoxExecutionResult, BoxSessionInfo, BoxSpec
from box_runtime.process_models import (
    DEFAULT_PROCESS_ID,
    ManagedProcessInfo,
    ManagedProcessSpec,
    check_process_id,
)
from langbot_plugin.protocol.spec import ActionSpec, Empty, Params, Result

__all__ = [
    "ALL_ACTIONS",
    "BOX_CREATE_SESSION",
    "BOX_DELETE_SESSION",
    "BOX_EXEC",
    "BOX_GET_BACKEND_INFO",
    "BOX_GET_MANAGED_PROCESS",
    "BOX_GET_SESSION",
    "BOX_GET_SESSIONS",
    "BOX_GET_STORAGE_ANALYSIS",
    "BOX_HEALTH",
    "BOX_INIT",
    "BOX_REVOKE_SANDBOX_ADMISSION_GRANT",
    "BOX_SHUTDOWN",
    "BOX_START_MANAGED_PROCESS",
    "BOX_STATUS",
    "BOX_STOP_MANAGED_PROCESS",
    "BOX_UPSERT_SANDBOX_ADMISSION_GRANT",
    "BOX_VERIFY_SHARED_WORKSPACE",
    "DIALECT_05_ONLY",
    "DIALECT_07_ONLY",
    "MANAGED_PROCESS_ACTIONS",
    "SKILL_ACTIONS",
    "AdmissionGrant",
    "AdmissionRevocation",
    "BackendInfo",
    "BoxStatus",
    "Capacity",
    "Deleted",
    "InitResult",
    "ManagedProcessRef",
    "ManagedProcessStart",
    "ManagedProcessStopped",
    "SessionList",
    "SessionRef",
    "SharedWorkspaceProbe",
    "SharedWorkspaceProof",
    "StorageAnalysis",
]


# --------------------------------------------------------------------------- models


class InitResult(Result):
    initialized: bool = True


class BackendInfo(Result):
    """The selected backend; ``name`` is ``None`` when none is usable (``reason`` says why)."""

    name: str | None
    available: bool
    reason: str | None = None


class Capacity(Result):
    limit: int
    used: int
    remaining: int


class BoxStatus(Result):
    backend: BackendInfo
    active_sessions: int
    managed_processes: int = 0
    session_ttl_sec: int
    limits: dict[str, int]
    capacity: Capacity
    profile: str = "default"
    initialized: bool = True


class SessionRef(Params):
    session_id: str


class SessionList(Result):
    sessions: list[BoxSessionInfo] = Field(default_factory=list[BoxSessionInfo])


class Deleted(Result):
    deleted: str


class StorageDirectory(Result):
    key: str
    path: str
    kind: str = "root"
    exists: bool
    size_bytes: int
    file_count: int
    error_count: int = 0
    scope: str = "runtime_host"


class StorageAnalysis(Result):
    size_bytes: int
    directories: list[StorageDirectory] = Field(default_factory=list[StorageDirectory])
    active_sessions: int
    managed_processes: int = 0


class ManagedProcessStart(Params):
    session_id: str
    spec: ManagedProcessSpec


class ManagedProcessRef(Params):
    session_id: str
    process_id: str = DEFAULT_PROCESS_ID

    @field_validator("process_id")
    @classmethod
    def _process_id(cls, value: str) -> str:
        return check_process_id(value)


class ManagedProcessStopped(Result):
    stopped: str


class AdmissionGrant(Params):
    instance_uuid: str
    workspace_uuid: str
    execution_generation: int
    entitlement_revision: int
    expires_at: dt.datetime
    max_sessions: int
    max_managed_processes: int


class AdmissionRevocation(Params):
    instance_uuid: str
    workspace_uuid: str
    entitlement_revision: int


class SharedWorkspaceProbe(Params):
    marker_name: str


class SharedWorkspaceProof(Result):
    marker_name: str
    sha256: str
    size: int


# --------------------------------------------------------------------------- actions

BOX_INIT = ActionSpec(
    "box_init", Params, InitResult, doc="Deep-merge the host's box config and apply it."
)
BOX_HEALTH = ActionSpec("box_health", Empty, BackendInfo, doc="Backend availability.")
BOX_STATUS = ActionSpec("box_status", Empty, BoxStatus, doc="Backend, sessions, limits, capacity.")
BOX_GET_BACKEND_INFO = ActionSpec("box_get_backend_info", Empty, BackendInfo)
BOX_EXEC = ActionSpec(
    "box_exec", BoxSpec, BoxExecutionResult, doc="Run a command, creating the session on demand."
)
BOX_CREATE_SESSION = ActionSpec("box_create_session", BoxSpec, BoxSessionInfo)
BOX_GET_SESSION = ActionSpec("box_get_session", SessionRef, BoxSessionInfo)
BOX_GET_SESSIONS = ActionSpec("box_get_sessions", Empty, SessionList)
BOX_DELETE_SESSION = ActionSpec("box_delete_session", SessionRef, Deleted)
BOX_GET_STORAGE_ANALYSIS = ActionSpec("box_get_storage_analysis", Empty, StorageAnalysis)
BOX_SHUTDOWN = ActionSpec(
    "box_shutdown", Empty, Empty, doc="Remove every non-persistent session; keep serving."
)
BOX_START_MANAGED_PROCESS = ActionSpec(
    "box_start_managed_process",
    ManagedProcessStart,
    ManagedProcessInfo,
    doc="Start a long-lived process in a session (a running one with the same spec is reused).",
)
BOX_GET_MANAGED_PROCESS = ActionSpec(
    "box_get_managed_process", ManagedProcessRef, ManagedProcessInfo
)
BOX_STOP_MANAGED_PROCESS = ActionSpec(
    "box_stop_managed_process",
    ManagedProcessRef,
    ManagedProcessStopped,
    doc="Stop a process in order: close stdin, wait, terminate, kill.",
)
BOX_UPSERT_SANDBOX_ADMISSION_GRANT = ActionSpec(
    "box_upsert_sandbox_admission_grant", AdmissionGrant, Result
)
BOX_REVOKE_SANDBOX_ADMISSION_GRANT = ActionSpec(
    "box_revoke_sandbox_admission_grant", AdmissionRevocation, Result
)
BOX_VERIFY_SHARED_WORKSPACE = ActionSpec(
    "box_verify_shared_workspace", SharedWorkspaceProbe, SharedWorkspaceProof
)

MANAGED_PROCESS_ACTIONS = (
    BOX_START_MANAGED_PROCESS,
    BOX_GET_MANAGED_PROCESS,
    BOX_STOP_MANAGED_PROCESS,
)

#: The 0.5 skill-store actions (answered with ``not_supported`` for now).
SKILL_ACTIONS = tuple(
    ActionSpec(name, Params, Result, doc="0.5 skill store (not supported yet).")
    for name in (
        "box_list_skills",
        "box_get_skill",
        "box_create_skill",
        "box_update_skill",
        "box_delete_skill",
        "box_scan_skill_directory",
        "box_list_skill_files",
        "box_read_skill_file",
        "box_write_skill_file",
        "box_preview_skill_zip",
        "box_install_skill_zip",
    )
)

DIALECT_07_ONLY = frozenset({BOX_GET_STORAGE_ANALYSIS.name})
DIALECT_05_ONLY = frozenset(spec.name for spec in SKILL_ACTIONS)

ALL_ACTIONS: tuple[ActionSpec[Any, Any], ...] = (
    BOX_INIT,
    BOX_HEALTH,
    BOX_STATUS,
    BOX_GET_BACKEND_INFO,
    BOX_EXEC,
    BOX_CREATE_SESSION,
    BOX_GET_SESSION,
    BOX_GET_SESSIONS,
    BOX_DELETE_SESSION,
    BOX_GET_STORAGE_ANALYSIS,
    BOX_SHUTDOWN,
    *MANAGED_PROCESS_ACTIONS,
    BOX_UPSERT_SANDBOX_ADMISSION_GRANT,
    BOX_REVOKE_SANDBOX_ADMISSION_GRANT,
    BOX_VERIFY_SHARED_WORKSPACE,
    *SKILL_ACTIONS,
)
