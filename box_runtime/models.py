"""Data models of the Box: what a sandbox request looks like and what comes back.

Field names and defaults follow the released host's wire format (it sends
``BoxSpec.model_dump()`` and reads these result fields). Models accept unknown keys so
a newer host never fails validation; validators reject what would be unsafe or
meaningless. :data:`BUILTIN_PROFILES` are the presets of docs/box.md, *Profiles*.
"""

from __future__ import annotations

import datetime as dt
import enum
import ntpath
import posixpath
import re
from collections.abc import Callable
from typing import Any, Self, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from langbot_plugin.protocol.spec import Params, Result
from langbot_plugin.protocol.tree_digest import ARTIFACT_MOUNT_ROOT

__all__ = [
    "ARTIFACT_MOUNT_ROOT",
    "BUILTIN_PROFILES",
    "DEFAULT_MOUNT_PATH",
    "PROFILE_FIELDS",
    "BoxExecutionResult",
    "BoxExecutionStatus",
    "BoxHostMountMode",
    "BoxMountSpec",
    "BoxNetworkMode",
    "BoxProfile",
    "BoxSessionInfo",
    "BoxSpec",
    "QuotaReport",
    "SessionStatus",
]

DEFAULT_MOUNT_PATH = "/workspace"
_MAX_SESSION_ID_CHARS = 512
_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
#: BoxSpec's numeric fields: the range each must be in, and the refusal when it is not.
_LIMITS: dict[str, tuple[Callable[[float], bool], str]] = {
    "timeout_sec": (lambda v: v > 0, "timeout_sec must be greater than 0"),
    "cpus": (lambda v: 0 < v <= 1024, "cpus must be greater than 0 (and at most 1024)"),
    "memory_mb": (lambda v: v >= 32, "memory_mb must be at least 32"),
    "pids_limit": (lambda v: v >= 1, "pids_limit must be at least 1"),
    "workspace_quota_mb": (
        lambda v: v >= 0,
        "workspace_quota_mb must be greater than or equal to 0",
    ),
}


class BoxNetworkMode(enum.StrEnum):
    OFF = "off"
    ON = "on"


class BoxHostMountMode(enum.StrEnum):
    NONE = "none"
    READ_ONLY = "ro"
    READ_WRITE = "rw"


class BoxExecutionStatus(enum.StrEnum):
    COMPLETED = "completed"
    TIMED_OUT = "timed_out"


class SessionStatus(enum.StrEnum):
    IDLE = "idle"
    RUNNING = "running"
    CLOSING = "closing"


def _absolute_host_path(value: str | None, info: ValidationInfo) -> str | None:
    if value is None:
        return None
    value = value.strip()
    field = info.field_name
    if not (posixpath.isabs(value) or ntpath.isabs(value)):
        raise ValueError(f"{field} must be an absolute host path")
    if "\x00" in value:
        raise ValueError(f"{field} must not contain NUL")
    return value


def _sandbox_path(value: str, field: str, *, normalized: bool = False) -> str:
    value = value.strip()
    if not value.startswith("/"):
        raise ValueError(f"{field} must be an absolute path inside the sandbox")
    if "\x00" in value:
        raise ValueError(f"{field} must not contain NUL")
    if normalized and posixpath.normpath(value) != value:
        raise ValueError(f"{field} must be normalized (no '.', '..', '//' or trailing '/')")
    return value


def _mount_path(value: str) -> str:
    return _sandbox_path(value, "mount_path", normalized=True)


class BoxMountSpec(BaseModel):
    """One additional bind mount: ``host_path`` on the host at ``mount_path`` inside."""

    model_config = ConfigDict(extra="allow")

    host_path: str
    mount_path: str
    mode: BoxHostMountMode = BoxHostMountMode.READ_WRITE
    content_digest: str | None = None
    manifest_path: str | None = None

    _host_paths = field_validator("host_path", "manifest_path")(_absolute_host_path)
    _mount = field_validator("mount_path")(_mount_path)

    @field_validator("content_digest")
    @classmethod
    def _digest(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip()
        if not _DIGEST.fullmatch(value):
            raise ValueError("content_digest must be sha256:<64 lowercase hex>")
        return value

    @property
    def content_addressed(self) -> bool:
        """Whether the mount is content-addressed (per command, not the session's): read-only,
        with a manifest, at the path its digest names (a digest elsewhere: an ordinary mount)."""
        return bool(
            self.mode is BoxHostMountMode.READ_ONLY
            and self.content_digest
            and self.manifest_path
            and self.mount_path == f"{ARTIFACT_MOUNT_ROOT}/{self.content_digest[7:]}"
        )

    @model_validator(mode="after")
    def _artifact_paths(self) -> Self:
        under_artifacts = self.mount_path == ARTIFACT_MOUNT_ROOT or self.mount_path.startswith(
            ARTIFACT_MOUNT_ROOT + "/"
        )
        if under_artifacts and not self.content_addressed:
            raise ValueError(
                f"mounts under {ARTIFACT_MOUNT_ROOT} must be read-only, digest-addressed "
                "and carry a manifest_path"
            )
        return self


class BoxSpec(Params):
    """A sandbox request: the session to use (created on demand) and a command to run.

    An empty ``image`` means "the runtime's configured image". Fields a request leaves
    out take the active profile's values (see :data:`PROFILE_FIELDS`).
    """

    cmd: str = ""
    workdir: str = DEFAULT_MOUNT_PATH
    timeout_sec: int = 30
    network: BoxNetworkMode = BoxNetworkMode.OFF
    session_id: str
    env: dict[str, str] = Field(default_factory=dict[str, str])
    image: str = ""
    host_path: str | None = None
    host_path_mode: BoxHostMountMode = BoxHostMountMode.READ_WRITE
    mount_path: str = DEFAULT_MOUNT_PATH
    extra_mounts: list[BoxMountSpec] = Field(default_factory=list[BoxMountSpec])
    persistent: bool = False
    cpus: float = 1.0
    memory_mb: int = 512
    pids_limit: int = 128
    read_only_rootfs: bool = True
    workspace_quota_mb: int = 0

    @model_validator(mode="before")
    @classmethod
    def _workdir_defaults_to_mount_path(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        payload = cast(dict[str, Any], data)
        if payload.get("workdir") not in (None, ""):
            return payload
        payload = {key: value for key, value in payload.items() if key != "workdir"}
        mount_path = payload.get("mount_path")
        if isinstance(mount_path, str) and mount_path.strip():
            payload["workdir"] = mount_path
        return payload

    @field_validator("cmd")
    @classmethod
    def _cmd(cls, value: str) -> str:
        if "\x00" in value:  # no program can take it: refused here, not by exec
            raise ValueError("cmd must not contain NUL")
        return value.strip()

    @field_validator("image")
    @classmethod
    def _image(cls, value: str) -> str:
        return value.strip()

    @field_validator("session_id")
    @classmethod
    def _session_id(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("session_id must not be empty")
        if len(value) > _MAX_SESSION_ID_CHARS:
            raise ValueError(f"session_id must be at most {_MAX_SESSION_ID_CHARS} characters")
        if _CONTROL_CHARS.search(value):
            raise ValueError("session_id must not contain control characters")
        return value

    @field_validator("workdir")
    @classmethod
    def _workdir(cls, value: str) -> str:
        return _sandbox_path(value, "workdir")

    _mount = field_validator("mount_path")(_mount_path)
    _host_path = field_validator("host_path")(_absolute_host_path)

    @field_validator(*_LIMITS)
    @classmethod
    def _in_range(cls, value: float, info: ValidationInfo) -> float:
        within, message = _LIMITS[str(info.field_name)]
        if not within(value):
            raise ValueError(message)
        return value

    @model_validator(mode="after")
    def _workdir_under_mount(self) -> Self:
        if self.host_path is None or self.host_path_mode is BoxHostMountMode.NONE:
            return self
        if self.workdir != self.mount_path and not self.workdir.startswith(
            self.mount_path.rstrip("/") + "/"
        ):
            raise ValueError("workdir must stay under mount_path when host_path is provided")
        return self


class BoxProfile(BaseModel):
    """A preset of sandbox settings; ``locked`` fields cannot be changed by a request."""

    model_config = ConfigDict(frozen=True)

    name: str
    image: str = ""
    network: BoxNetworkMode = BoxNetworkMode.OFF
    timeout_sec: int = 30
    host_path_mode: BoxHostMountMode = BoxHostMountMode.READ_WRITE
    max_timeout_sec: int = 120
    cpus: float = 1.0
    memory_mb: int = 512
    pids_limit: int = 128
    read_only_rootfs: bool = True
    workspace_quota_mb: int = 0
    locked: frozenset[str] = frozenset()


#: Request fields a profile provides defaults for (and may lock).
PROFILE_FIELDS = (
    "image",
    "network",
    "timeout_sec",
    "host_path_mode",
    "cpus",
    "memory_mb",
    "pids_limit",
    "read_only_rootfs",
    "workspace_quota_mb",
)

BUILTIN_PROFILES: dict[str, BoxProfile] = {
    profile.name: profile
    for profile in (
        # Secure by default: no network unless a request (or profile) turns it on.
        BoxProfile(name="default"),
        BoxProfile(
            name="offline_readonly",
            host_path_mode=BoxHostMountMode.READ_ONLY,
            cpus=0.5,
            memory_mb=256,
            pids_limit=64,
            max_timeout_sec=60,
            locked=frozenset({"network", "host_path_mode", "read_only_rootfs"}),
        ),
        BoxProfile(name="network_basic", network=BoxNetworkMode.ON),
        BoxProfile(
            name="network_extended",
            network=BoxNetworkMode.ON,
            cpus=2.0,
            memory_mb=1024,
            pids_limit=256,
            read_only_rootfs=False,
            max_timeout_sec=300,
        ),
    )
}


class BoxSessionInfo(Result):
    """A live session as the host sees it (``session_id`` is the caller's id)."""

    session_id: str
    backend_name: str
    backend_session_id: str
    image: str
    network: BoxNetworkMode
    host_path: str | None = None
    host_path_mode: BoxHostMountMode = BoxHostMountMode.READ_WRITE
    mount_path: str = DEFAULT_MOUNT_PATH
    persistent: bool = False
    cpus: float = 1.0
    memory_mb: int = 512
    pids_limit: int = 128
    read_only_rootfs: bool = True
    workspace_quota_mb: int = 0
    created_at: dt.datetime
    last_used_at: dt.datetime
    status: SessionStatus = SessionStatus.IDLE
    managed_process_count: int = 0
    #: How the workspace quota is enforced: ``filesystem``, ``watch`` or ``none``.
    workspace_quota_enforcement: str = "none"


class QuotaReport(Result):
    """A workspace quota that a command met: the threshold and the actual figure."""

    quota: str = "workspace_bytes"
    limit: int
    actual: int
    unit: str = "bytes"
    #: ``filesystem`` (the kernel refused the writes) or ``watch`` (measured).
    enforcement: str
    message: str


class BoxExecutionResult(Result):
    """What one command produced. Output beyond the runtime's limit keeps its head and tail."""

    session_id: str
    backend_name: str
    status: BoxExecutionStatus
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    duration_ms: int
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    #: Set when the session's workspace is at its quota after the command.
    workspace_quota: QuotaReport | None = None

    @property
    def ok(self) -> bool:
        return self.status is BoxExecutionStatus.COMPLETED and self.exit_code == 0
