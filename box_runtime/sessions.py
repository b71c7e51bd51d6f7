"""Sessions: identity, the profile-resolved request, compatibility, and sandbox plans.

A :class:`SessionKey` is the tenant and the caller's ``session_id``, kept verbatim; the
engine-side name and the session's own directory ``<state>/sessions/<key hash>`` derive
from the SHA-256 of the whole key, so no two keys share a sandbox or its files
(docs/box.md, *Session ids and scope*).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Literal

import anyio

from box_runtime.artifacts import VIEW_DIR, ArtifactSource, ArtifactStore, split_mounts
from box_runtime.backends.base import Mount, SandboxPlan
from box_runtime.config import DEFAULT_IMAGE, BoxConfig
from box_runtime.errors import (
    BoxMountDeniedError,
    BoxSessionConflictError,
    BoxSessionDeletedError,
    BoxValidationError,
)
from box_runtime.export import RunLedger
from box_runtime.models import (
    ARTIFACT_MOUNT_ROOT,
    BUILTIN_PROFILES,
    PROFILE_FIELDS,
    BoxHostMountMode,
    BoxNetworkMode,
    BoxSessionInfo,
    BoxSpec,
    SessionStatus,
)
from box_runtime.quota import QuotaEnforcement, mount_volume, unmount_volume
from box_runtime.scope import check_session_id
from box_runtime.security import check_env, check_mount, check_sandbox_mount_paths, is_within
from box_runtime.session_dirs import write_marker

__all__ = [
    "COMPATIBILITY_FIELDS",
    "SKILLS_DIR",
    "QuotaMode",
    "Session",
    "SessionKey",
    "Tenant",
    "assert_compatible",
    "default_image",
    "deleted_error",
    "make_plan",
    "resolve_spec",
]

QuotaMode = Literal["auto", "filesystem", "watch"]
#: Skills appear at ``<mount_path>/.skills/<name>`` in a session.
SKILLS_DIR = ".skills"
_MIB = 1024 * 1024

#: Settings a reused session must match (a different value is a conflict, not a silent reuse).
COMPATIBILITY_FIELDS = (
    "network",
    "image",
    "host_path",
    "host_path_mode",
    "mount_path",
    "persistent",
    "cpus",
    "memory_mb",
    "pids_limit",
    "read_only_rootfs",
    "workspace_quota_mb",
)


@dataclass(frozen=True, slots=True)
class Tenant:
    """Who a session belongs to, from the request ``context`` the host sends."""

    instance_uuid: str
    workspace_uuid: str
    generation: int


@dataclass(frozen=True, slots=True)
class SessionKey:
    tenant: Tenant | None
    session_id: str

    @property
    def digest(self) -> str:
        tenant = self.tenant
        parts = [
            tenant.instance_uuid if tenant else None,
            tenant.workspace_uuid if tenant else None,
            tenant.generation if tenant else None,
            self.session_id,
        ]
        text = json.dumps(parts, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(slots=True, eq=False)
class Session:
    key: SessionKey
    spec: BoxSpec
    plan: SandboxPlan
    handle: str
    backend_name: str
    workspace_dir: str
    created_at: dt.datetime
    last_used_at: dt.datetime
    last_used_mono: float
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    closed: anyio.Event = field(default_factory=anyio.Event)
    #: Execs waiting for or holding the lock (a session in use is never reaped).
    active: int = 0
    closing: bool = False
    #: The scope of the command running now; deleting the session cancels it.
    running: anyio.CancelScope | None = None
    #: Explicit exports per run (cumulative limits); dropped with the session.
    exports: dict[str, RunLedger] = field(default_factory=dict[str, RunLedger])
    #: Verified copies of content-addressed mounts, in the session directory.
    artifacts: ArtifactStore = field(init=False)
    #: The content-addressed mounts of the latest ``box_create_session``: what a
    #: managed process started afterwards sees.
    artifact_sources: tuple[ArtifactSource, ...] = ()

    def __post_init__(self) -> None:
        self.artifacts = ArtifactStore(self.plan.session_dir)

    def touch(self, mono: float) -> None:
        self.last_used_mono = mono
        self.last_used_at = dt.datetime.now(dt.UTC)

    @asynccontextmanager
    async def use(self, clock: Callable[[], float], doing: str) -> AsyncGenerator[None]:
        """Hold the session for one operation: counted in use (never reaped), locked,
        refused if it is being deleted (``doing`` says what was about to happen)."""
        self.active += 1
        try:
            async with self.lock:
                if self.closing:
                    raise deleted_error(self, doing)
                yield
        finally:
            self.active -= 1
            self.touch(clock())

    def info(self) -> BoxSessionInfo:
        status = (
            SessionStatus.CLOSING
            if self.closing
            else SessionStatus.RUNNING
            if self.active
            else SessionStatus.IDLE
        )
        return BoxSessionInfo(
            **{name: getattr(self.spec, name) for name in COMPATIBILITY_FIELDS},
            session_id=self.key.session_id,
            backend_name=self.backend_name,
            backend_session_id=self.handle,
            created_at=self.created_at,
            last_used_at=self.last_used_at,
            status=status,
            workspace_quota_enforcement=self.plan.quota_enforcement,
        )


def deleted_error(session: Session, when: str) -> BoxSessionDeletedError:
    return BoxSessionDeletedError(
        f"session {session.key.session_id} was deleted {when}",
        details={"session_id": session.key.session_id},
    )


def default_image(config: BoxConfig) -> str:
    """The image of a request that names none: the profile's, ``local.image``, else ours."""
    profile = BUILTIN_PROFILES[config.local.profile]
    return str(profile.image) or config.local.image or DEFAULT_IMAGE


def resolve_spec(spec: BoxSpec, config: BoxConfig, *, custom_images: bool = True) -> BoxSpec:
    """Apply the active profile: defaults for unset fields, locked fields, timeout cap."""
    check_session_id(spec.session_id, strict=config.sessions.strict_ids)
    check_env(spec.env)
    profile = BUILTIN_PROFILES[config.local.profile]
    given = spec.model_fields_set
    update: dict[str, object] = {}
    for name in PROFILE_FIELDS:
        if name in profile.locked or name not in given:
            update[name] = getattr(profile, name)
    if "workspace_quota_mb" not in given and config.local.workspace_quota_mb is not None:
        update["workspace_quota_mb"] = config.local.workspace_quota_mb
    image = str(update.get("image", spec.image)) or config.local.image or DEFAULT_IMAGE
    update["image"] = image if custom_images else "host"
    timeout = update.get("timeout_sec", spec.timeout_sec)
    assert isinstance(timeout, int)
    update["timeout_sec"] = min(timeout, profile.max_timeout_sec)
    skills = f"{spec.mount_path.rstrip('/')}/{SKILLS_DIR}/"
    if any(m.mount_path.startswith(skills) for m in spec.extra_mounts):
        # Skills are mounted read-only, whatever mode the request names (the reference
        # host asks for "rw").
        update["extra_mounts"] = [
            m.model_copy(update={"mode": BoxHostMountMode.READ_ONLY})
            if m.mount_path.startswith(skills)
            else m
            for m in spec.extra_mounts
        ]
    return spec.model_copy(update=update)


def assert_compatible(existing: BoxSpec, requested: BoxSpec) -> None:
    """Raise when a request for an existing session asks for different settings."""
    for name in COMPATIBILITY_FIELDS:
        have, want = getattr(existing, name), getattr(requested, name)
        if have != want:
            raise BoxSessionConflictError(
                f"session {requested.session_id} already exists with {name}={_show(have)} "
                f"(requested {_show(want)}); delete it or use another session_id",
                details={"field": name, "existing": _show(have), "requested": _show(want)},
            )
    if _mount_set(existing) != _mount_set(requested):
        raise BoxSessionConflictError(
            f"session {requested.session_id} already exists with other extra_mounts; "
            "mounts are fixed when a session is created (content-addressed mounts under "
            f"{ARTIFACT_MOUNT_ROOT} are the exception: each command brings its own)",
            details={"field": "extra_mounts"},
        )


def _show(value: object) -> object:
    return value.value if isinstance(value, BoxNetworkMode | BoxHostMountMode) else value


def _mount_set(spec: BoxSpec) -> set[tuple[str, str, str]]:
    """The session's fixed extra mounts (content-addressed ones belong to one command)."""
    fixed, _ = split_mounts(spec.extra_mounts)
    return {(m.host_path, m.mount_path, m.mode.value) for m in fixed}


def make_plan(
    spec: BoxSpec,
    key: SessionKey,
    *,
    sessions_root: str,
    deployment_id: str,
    allowed_roots: list[str],
    extra_denied: tuple[str, ...],
    quota_mode: QuotaMode = "auto",
    filesystem_quota_unavailable: str | None = None,
    host_path_owned: bool = False,
    skills_root: str = "",
    artifact_view: bool = False,
) -> tuple[SandboxPlan, str]:
    """Check every mount, create the session's directories; return the plan and workspace.

    A session with a workspace quota gets its directories on a quota filesystem of its
    own when it can (see :mod:`box_runtime.quota`), else a watched workspace.
    ``host_path_owned``: the ``host_path`` is the runtime's own (a managed workspace),
    so a backend may hand it to the sandbox user like a session workspace.
    ``skills_root``: the skill store, which extra mounts may use (read-only, always)
    and a workspace may not be.
    ``artifact_view``: the backend mounts the session's artifact view read-only at
    ``/opt/langbot-artifacts`` (see :mod:`box_runtime.artifacts`). Content-addressed
    mounts are never part of the plan: each command brings its own.
    Blocking (filesystem work): run it in a worker thread.
    """
    digest = key.digest
    session_dir = os.path.join(sessions_root, digest)
    mounts: list[Mount] = []
    fixed, _ = split_mounts(spec.extra_mounts)
    check_sandbox_mount_paths([spec.mount_path, *(m.mount_path for m in fixed)])
    if spec.host_path is not None and spec.host_path_mode is not BoxHostMountMode.NONE:
        # Check before creating anything, then again once the directory exists, so a
        # symlink planted in between cannot redirect the mount.
        check_mount(spec.host_path, allowed_roots, extra_denied=extra_denied)
        os.makedirs(spec.host_path, exist_ok=True)
        workspace = check_mount(spec.host_path, allowed_roots, extra_denied=extra_denied)
        if skills_root and (is_within(workspace, skills_root) or is_within(skills_root, workspace)):
            raise BoxMountDeniedError(
                f"host_path {spec.host_path} is refused: the skill store cannot be a workspace"
            )
        in_session_dir, owned = False, host_path_owned
        read_only = spec.host_path_mode is BoxHostMountMode.READ_ONLY
    else:
        workspace = ""  # decided below, once the quota filesystem (if any) is mounted
        in_session_dir = owned = True
        read_only = False
    for index, extra in enumerate(spec.extra_mounts):
        if extra.mode is BoxHostMountMode.NONE or extra not in fixed:
            continue
        real = check_mount(
            extra.host_path,
            [*allowed_roots, *([skills_root] if skills_root else [])],
            field=f"extra_mounts[{index}].host_path",
            extra_denied=extra_denied,
        )
        if not os.path.exists(real):
            raise BoxValidationError(
                f"extra_mounts[{index}].host_path {extra.host_path} does not exist"
            )
        # The skill store may always be mounted, never written.
        read_only_extra = extra.mode is BoxHostMountMode.READ_ONLY or bool(
            skills_root and is_within(real, skills_root)
        )
        mounts.append(Mount(real, extra.mount_path, read_only_extra))
    quota_bytes = spec.workspace_quota_mb * _MIB
    enforcement = _quota_enforcement(
        quota_bytes,
        in_session_dir=in_session_dir,
        mode=quota_mode,
        unavailable=filesystem_quota_unavailable,
    )
    # 0o711: a jail user must be able to pass through to its own mounts, not list them.
    os.makedirs(sessions_root, mode=0o711, exist_ok=True)
    os.makedirs(session_dir, mode=0o711, exist_ok=True)
    write_marker(
        session_dir,
        deployment_id=deployment_id,
        session_id=key.session_id,
        workspace_uuid=key.tenant.workspace_uuid if key.tenant else None,
        persistent=spec.persistent,
    )
    base = mount_volume(session_dir, quota_bytes) if enforcement == "filesystem" else session_dir
    tmp_dir, home_dir = os.path.join(base, "tmp"), os.path.join(base, "home")
    try:
        os.makedirs(os.path.join(base, "workspace"), mode=0o755, exist_ok=True)
        os.makedirs(tmp_dir, mode=0o1777, exist_ok=True)
        os.chmod(tmp_dir, 0o1777)
        os.makedirs(home_dir, mode=0o755, exist_ok=True)
    except BaseException:
        unmount_volume(session_dir)
        raise
    if in_session_dir:
        workspace = os.path.join(base, "workspace")
    mounts.insert(0, Mount(workspace, spec.mount_path, read_only))
    if artifact_view:
        view = os.path.join(session_dir, VIEW_DIR)
        os.makedirs(view, mode=0o755, exist_ok=True)
        mounts.append(Mount(view, ARTIFACT_MOUNT_ROOT, True))
    plan = SandboxPlan(
        name=f"lbbox-{deployment_id}-{digest}",
        key_hash=digest,
        session_id=key.session_id,
        deployment_id=deployment_id,
        image=spec.image,
        network=spec.network is BoxNetworkMode.ON,
        cpus=spec.cpus,
        memory_mb=spec.memory_mb,
        pids_limit=spec.pids_limit,
        read_only_rootfs=spec.read_only_rootfs,
        persistent=spec.persistent,
        mounts=tuple(mounts),
        mount_path=spec.mount_path,
        session_dir=session_dir,
        workspace_owned=owned,
        tmp_dir=tmp_dir,
        home_dir=home_dir,
        quota_enforcement=enforcement,
        max_file_bytes=quota_bytes if enforcement == "watch" else None,
        request=spec,
        # No "langbot.box=true": the reference runtime's startup cleanup removes every
        # container carrying it, which would take ours down when both share an engine.
        labels={
            "langbot.box.deployment": deployment_id,
            "langbot.box.key": digest,
            "langbot.box.session": key.session_id[:1024],
            "langbot.box.persistent": "true" if spec.persistent else "false",
            "langbot.box.workspace": key.tenant.workspace_uuid if key.tenant else "",
        },
    )
    return plan, workspace


def _quota_enforcement(
    quota_bytes: int, *, in_session_dir: bool, mode: QuotaMode, unavailable: str | None
) -> QuotaEnforcement:
    if quota_bytes <= 0:
        return "none"
    if mode == "watch":
        return "watch"
    if in_session_dir and unavailable is None:
        return "filesystem"
    if mode == "filesystem":
        why = "the workspace is a host_path" if not in_session_dir else unavailable
        raise BoxValidationError(
            "box.local.workspace_quota_enforcement is 'filesystem' but this session's "
            f"quota cannot be a filesystem of its own: {why}"
        )
    return "watch"
