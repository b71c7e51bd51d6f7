"""Every action the Box serves, declared once with its parameter and result models.

Both dialects (the 0.7 host, LangBot 4.11.x on PyPI, and the 0.5 host) use the same
names for the shared actions; docs/box.md, *Protocol*, lists which sends what.
``__ping`` and the other control actions are served by the RPC session itself.

Each declaration says how long a caller waits (``timeout``): every client of the Box
takes its waits from here. A quick read waits :data:`QUICK_SEC`; ``box_exec`` waits its
own ``timeout_sec`` plus :data:`EXEC_MARGIN_SEC` and never less than :data:`EXEC_SEC`
(docs/box.md, *Client*).
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, Field, field_validator

from box_runtime.admission_models import (
    AdmissionGrant,
    AdmissionReceipt,
    AdmissionRevocation,
    RevocationReceipt,
)
from box_runtime.audit import AuditPage, AuditQuery
from box_runtime.models import BoxExecutionResult, BoxSessionInfo, BoxSpec
from box_runtime.pool_models import PoolSpecStatus, PoolStatus
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
    "BOX_GET_AUDIT",
    "BOX_GET_BACKEND_INFO",
    "BOX_GET_MANAGED_PROCESS",
    "BOX_GET_SESSION",
    "BOX_GET_SESSIONS",
    "BOX_GET_STORAGE_ANALYSIS",
    "BOX_HEALTH",
    "BOX_INIT",
    "BOX_READ_FILES",
    "BOX_REMOVE_FILES_IF_MATCH",
    "BOX_REVOKE_SANDBOX_ADMISSION_GRANT",
    "BOX_SHUTDOWN",
    "BOX_START_MANAGED_PROCESS",
    "BOX_STATUS",
    "BOX_STOP_MANAGED_PROCESS",
    "BOX_UPSERT_SANDBOX_ADMISSION_GRANT",
    "BOX_VERIFY_SHARED_WORKSPACE",
    "BOX_WRITE_FILES",
    "CREATE_SEC",
    "DIALECT_05_ONLY",
    "EXEC_MARGIN_SEC",
    "EXEC_SEC",
    "EXPORT_ACTIONS",
    "FILE_ACTIONS",
    "MANAGED_PROCESS_ACTIONS",
    "QUICK_SEC",
    "SKILL_ACTIONS",
    "SKILL_CREATE",
    "SKILL_DELETE",
    "SKILL_GET",
    "SKILL_INSTALL_ZIP",
    "SKILL_LIST",
    "SKILL_LIST_FILES",
    "SKILL_PREVIEW_ZIP",
    "SKILL_READ_FILE",
    "SKILL_SCAN",
    "SKILL_UPDATE",
    "SKILL_WRITE_FILE",
    "AdmissionGrant",
    "AdmissionReceipt",
    "AdmissionRevocation",
    "AnyResult",
    "AuditPage",
    "AuditQuery",
    "BackendInfo",
    "BoxStatus",
    "Capacity",
    "Deleted",
    "FileDigest",
    "InitResult",
    "KeptFile",
    "ManagedProcessRef",
    "ManagedProcessStart",
    "ManagedProcessStopped",
    "OneSkill",
    "PoolSpecStatus",
    "PoolStatus",
    "ReadFileInfo",
    "ReadFilesRequest",
    "ReadFilesResult",
    "RemoveFilesRequest",
    "RemoveFilesResult",
    "RevocationReceipt",
    "SessionList",
    "SessionRef",
    "SharedWorkspaceProbe",
    "SharedWorkspaceProof",
    "SkillCreate",
    "SkillFile",
    "SkillFiles",
    "SkillList",
    "SkillName",
    "SkillPath",
    "SkillUpdate",
    "SkillWrite",
    "SkillZipInstall",
    "SkillZipPreview",
    "StorageAnalysis",
    "WriteFileInfo",
    "WriteFilesRequest",
    "WriteFilesResult",
]


# --------------------------------------------------------------------------- models


class InitResult(Result):
    initialized: bool = True


class BackendInfo(Result):
    """The selected backend; ``name`` is ``None`` when none is usable (``reason`` says why).

    ``unsafe_direct_execution`` (the reference's name) is true for a backend that is not a
    sandbox (``host``); ``warning`` then says so in words. ``requested`` is
    ``box.backend`` (``local`` probes several) and ``skipped`` why each backend probed
    before this one was not used (ours; the reference sends neither).
    """

    name: str | None
    available: bool
    reason: str | None = None
    unsafe_direct_execution: bool = False
    warning: str | None = None
    requested: str | None = None
    skipped: dict[str, str] = Field(default_factory=dict[str, str])


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
    #: The warm pool (``box.pool``): per image, its target, ready and refilling counts.
    pool: PoolStatus = Field(default_factory=PoolStatus)


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
    #: For ``kind: detail`` entries: the key of the entry they break down.
    parent_key: str | None = None


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

    _process_id = field_validator("process_id")(check_process_id)


class ManagedProcessStopped(Result):
    stopped: str


class ReadFilesRequest(Params):
    """Explicit export: read these sandbox files of an existing session (seed 004)."""

    session_id: str
    paths: list[str]
    #: The run the export belongs to: its cumulative limits (100 files / 50 MiB).
    run_id: str | None = None


class ReadFileInfo(Result):
    """One exported file; its bytes arrived as the ``__file_chunk`` transfer ``file_key``."""

    path: str
    size: int
    sha256: str
    mode: int
    uid: int
    gid: int
    mtime_ns: int
    file_key: str


class ReadFilesResult(Result):
    files: list[ReadFileInfo] = Field(default_factory=list[ReadFileInfo])
    #: The run's totals after this batch (when the request named a run).
    run_files: int | None = None
    run_bytes: int | None = None


class WriteFileInfo(Params):
    """One file to import; its bytes arrive as the ``__file_chunk`` transfer ``file_key``."""

    name: str
    size: int
    file_key: str


class WriteFilesRequest(Params):
    """Import: write files into a new directory below ``/workspace/inbox`` of an
    existing session (a run's input attachments)."""

    session_id: str
    directory: str
    files: list[WriteFileInfo]


class WriteFilesResult(Result):
    #: The sandbox path of each file, in the order given.
    paths: list[str] = Field(default_factory=list[str])


class FileDigest(Params):
    path: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class RemoveFilesRequest(Params):
    """Delete exported files whose content still has the accepted digest."""

    session_id: str
    files: list[FileDigest] = Field(min_length=1, max_length=100)


class KeptFile(Result):
    path: str
    #: ``changed``, ``missing``, ``symlink``, ``not_regular``, ``not_permitted``, ...
    reason: str


class RemoveFilesResult(Result):
    removed: list[str] = Field(default_factory=list[str])
    kept: list[KeptFile] = Field(default_factory=list[KeptFile])


class SharedWorkspaceProbe(Params):
    marker_name: str


class SharedWorkspaceProof(Result):
    marker_name: str
    sha256: str
    size: int


# --------------------------------------------------------------------------- skills (0.5)


class SkillName(Params):
    name: str


class SkillCreate(Params):
    skill: dict[str, Any]


class SkillUpdate(Params):
    name: str
    skill: dict[str, Any]


class SkillPath(Params):
    path: str


class SkillFiles(Params):
    name: str
    path: str = "."
    include_hidden: bool = False
    max_entries: int = Field(default=200, ge=1)


class SkillFile(Params):
    name: str
    path: str


class SkillWrite(Params):
    name: str
    path: str
    content: str = ""


class SkillZipPreview(Params):
    """An archive sent as a ``__file_chunk`` transfer named ``file_key``."""

    file_key: str
    filename: str = "skill.zip"
    source_subdir: str | None = None
    target_suffix: str = "upload"


class SkillZipInstall(SkillZipPreview):
    source_paths: list[str] | None = None
    source_path: str | None = None


class SkillList(Result):
    skills: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])


class OneSkill(Result):
    skill: dict[str, Any] | None = None


class AnyResult(Result):
    """A store answer passed through as it is (its fields are the store's)."""


# --------------------------------------------------------------------------- actions

#: The wait of a quick action (a read, a small change): the released host's.
QUICK_SEC = 15.0
#: A session create may run a full container create (the Docker backend allows 30 s).
CREATE_SEC = 60.0
#: What ``box_exec`` waits beyond the command's own ``timeout_sec``: the Box may first
#: wait for the host's first ``box_init`` and create the session (as ``box_create_session``).
EXEC_MARGIN_SEC = CREATE_SEC
#: The least ``box_exec`` waits: the reference SDK's ``ActionRPCBoxClient`` waits this
#: long whatever the command's ``timeout_sec`` (commands of one session queue).
EXEC_SEC = 300.0
P = TypeVar("P", bound=BaseModel)
R = TypeVar("R")


def _box(
    name: str, params: type[P], result: type[R], doc: str = "", *, timeout: float = QUICK_SEC
) -> ActionSpec[P, R]:
    """A Box action; a caller waits :data:`QUICK_SEC` unless it says otherwise."""
    return ActionSpec(name, params, result, doc=doc, timeout=timeout)


# A changed backend is selected (probed) before box_init answers.
BOX_INIT = _box(
    "box_init",
    Params,
    InitResult,
    "Deep-merge the host's box config and apply it.",
    timeout=CREATE_SEC,
)
BOX_HEALTH = _box("box_health", Empty, BackendInfo, "Backend availability.")
BOX_STATUS = _box("box_status", Empty, BoxStatus, "Backend, sessions, limits, capacity.")
BOX_GET_BACKEND_INFO = _box("box_get_backend_info", Empty, BackendInfo)
BOX_EXEC = ActionSpec(
    "box_exec",
    BoxSpec,
    BoxExecutionResult,
    doc="Run a command, creating the session on demand.",
    timeout=EXEC_SEC,
    payload_wait=("timeout_sec", EXEC_MARGIN_SEC),
)
BOX_CREATE_SESSION = _box("box_create_session", BoxSpec, BoxSessionInfo, timeout=CREATE_SEC)
BOX_GET_SESSION = _box("box_get_session", SessionRef, BoxSessionInfo)
BOX_GET_SESSIONS = _box("box_get_sessions", Empty, SessionList)
BOX_DELETE_SESSION = _box("box_delete_session", SessionRef, Deleted, timeout=30.0)
BOX_GET_STORAGE_ANALYSIS = _box("box_get_storage_analysis", Empty, StorageAnalysis, timeout=60.0)
BOX_SHUTDOWN = _box(
    "box_shutdown", Empty, Empty, "Remove every non-persistent session; keep serving."
)
BOX_START_MANAGED_PROCESS = _box(
    "box_start_managed_process",
    ManagedProcessStart,
    ManagedProcessInfo,
    "Start a long-lived process in a session (a running one with the same spec is reused).",
    timeout=30.0,  # a first `uvx <pkg>` downloads before it starts
)
BOX_GET_MANAGED_PROCESS = _box("box_get_managed_process", ManagedProcessRef, ManagedProcessInfo)
BOX_STOP_MANAGED_PROCESS = _box(
    "box_stop_managed_process",
    ManagedProcessRef,
    ManagedProcessStopped,
    "Stop a process in order: close stdin, wait, terminate, kill.",
    timeout=30.0,
)
BOX_UPSERT_SANDBOX_ADMISSION_GRANT = _box(
    "box_upsert_sandbox_admission_grant",
    AdmissionGrant,
    AdmissionReceipt,
    "Install or renew a workspace's admission grant (managed mode).",
)
BOX_REVOKE_SANDBOX_ADMISSION_GRANT = _box(
    "box_revoke_sandbox_admission_grant",
    AdmissionRevocation,
    RevocationReceipt,
    "Revoke a workspace's grants up to a revision (managed mode).",
    timeout=30.0,
)
BOX_VERIFY_SHARED_WORKSPACE = _box(
    "box_verify_shared_workspace", SharedWorkspaceProbe, SharedWorkspaceProof
)
BOX_READ_FILES = _box(
    "box_read_files",
    ReadFilesRequest,
    ReadFilesResult,
    "Explicit export: read selected files of a session, all or none, within limits.",
    timeout=60.0,
)
BOX_REMOVE_FILES_IF_MATCH = _box(
    "box_remove_files_if_match",
    RemoveFilesRequest,
    RemoveFilesResult,
    "Delete exported files only where the content still matches the accepted digest.",
    timeout=60.0,
)
BOX_WRITE_FILES = _box(
    "box_write_files",
    WriteFilesRequest,
    WriteFilesResult,
    "Import: write files into a new directory below /workspace/inbox of a session.",
    timeout=60.0,
)
BOX_GET_AUDIT = ActionSpec(
    "box_get_audit",
    AuditQuery,
    AuditPage,
    doc="The audit of one session or of the caller's workspace (box_runtime.audit).",
    timeout=30.0,
)
EXPORT_ACTIONS = (BOX_READ_FILES, BOX_REMOVE_FILES_IF_MATCH)
#: Actions that move files into or out of an existing session.
FILE_ACTIONS = (*EXPORT_ACTIONS, BOX_WRITE_FILES)

MANAGED_PROCESS_ACTIONS = (
    BOX_START_MANAGED_PROCESS,
    BOX_GET_MANAGED_PROCESS,
    BOX_STOP_MANAGED_PROCESS,
)

#: The 0.5 skill-store actions (see :mod:`box_runtime.skills`).
SKILL_LIST = ActionSpec("box_list_skills", Empty, SkillList, doc="The workspace's skills.")
SKILL_GET = ActionSpec("box_get_skill", SkillName, OneSkill)
SKILL_CREATE = ActionSpec("box_create_skill", SkillCreate, OneSkill)
SKILL_UPDATE = ActionSpec("box_update_skill", SkillUpdate, OneSkill)
SKILL_DELETE = ActionSpec("box_delete_skill", SkillName, AnyResult)
SKILL_SCAN = ActionSpec("box_scan_skill_directory", SkillPath, AnyResult)
SKILL_LIST_FILES = ActionSpec("box_list_skill_files", SkillFiles, AnyResult)
SKILL_READ_FILE = ActionSpec("box_read_skill_file", SkillFile, AnyResult)
SKILL_WRITE_FILE = ActionSpec("box_write_skill_file", SkillWrite, AnyResult)
SKILL_PREVIEW_ZIP = ActionSpec("box_preview_skill_zip", SkillZipPreview, SkillList)
SKILL_INSTALL_ZIP = ActionSpec("box_install_skill_zip", SkillZipInstall, SkillList)
SKILL_ACTIONS: tuple[ActionSpec[Any, Any], ...] = (
    SKILL_LIST,
    SKILL_GET,
    SKILL_CREATE,
    SKILL_UPDATE,
    SKILL_DELETE,
    SKILL_SCAN,
    SKILL_LIST_FILES,
    SKILL_READ_FILE,
    SKILL_WRITE_FILE,
    SKILL_PREVIEW_ZIP,
    SKILL_INSTALL_ZIP,
)

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
    *FILE_ACTIONS,
    BOX_GET_AUDIT,
    *SKILL_ACTIONS,
)
