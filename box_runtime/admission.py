"""Managed sandbox admission: short-lived grants that the host installs per workspace.

With ``box_init {"admission": {"required": true, ...}}`` the Box serves a workspace's
sandbox actions only while a live grant for it is installed, within the deployment's
policy; the rules (the reference's) are in docs/box.md, *Admission*. Enforcement, once
on, cannot be switched off by a later ``box_init``. Every refusal is
:class:`~box_runtime.errors.BoxAdmissionError`. This module holds the state and the
rules; the service applies them to requests.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field

from pydantic import ValidationError

from box_runtime.admission_models import (
    MAX_GRANT_TTL_SEC,
    AdmissionGrant,
    AdmissionPolicy,
    AdmissionReceipt,
    AdmissionRevocation,
    RevocationReceipt,
)
from box_runtime.config import BoxConfig, field_problems
from box_runtime.errors import BoxAdmissionError, BoxReadinessError, BoxValidationError
from box_runtime.models import DEFAULT_MOUNT_PATH, BoxHostMountMode, BoxNetworkMode, BoxSpec

__all__ = [
    "MAX_ADMITTED_MOUNTS",
    "MAX_GRANT_TTL_SEC",
    "Admission",
    "AdmissionGrant",
    "AdmissionPolicy",
    "AdmissionReceipt",
    "AdmissionRevocation",
    "Grants",
    "RevocationReceipt",
    "admitted_spec",
    "canonical_workspace",
    "policy_from",
]

_UTC = dt.UTC


@dataclass
class Grants:
    """The installed grants and the per-workspace fences (revisions, generations)."""

    max_records: int
    grants: dict[tuple[str, str], AdmissionGrant] = field(
        default_factory=dict[tuple[str, str], AdmissionGrant]
    )
    revisions: dict[tuple[str, str], int] = field(default_factory=dict[tuple[str, str], int])
    generations: dict[tuple[str, str], int] = field(default_factory=dict[tuple[str, str], int])
    caps: dict[tuple[str, str], tuple[int, int]] = field(
        default_factory=dict[tuple[str, str], tuple[int, int]]
    )
    revoked: dict[tuple[str, str], int] = field(default_factory=dict[tuple[str, str], int])

    def _room_for(self, key: tuple[str, str]) -> None:
        if key not in self.revisions and len(self.revisions) >= self.max_records:
            raise BoxAdmissionError(
                "sandbox admission record capacity reached "
                f"({self.max_records} workspaces; box.limits.max_admission_records)"
            )

    def upsert(
        self, grant: AdmissionGrant, policy: AdmissionPolicy, now: dt.datetime
    ) -> tuple[AdmissionReceipt, bool]:
        """Install ``grant``; return the receipt and whether the workspace's sessions go."""
        if grant.expires_at <= now:
            raise BoxAdmissionError("cannot install an expired sandbox admission grant")
        if grant.expires_at > now + dt.timedelta(seconds=policy.max_grant_ttl_sec):
            raise BoxAdmissionError(
                f"the grant's lifetime exceeds the policy's {policy.max_grant_ttl_sec} s"
            )
        if grant.max_sessions > policy.max_sessions:
            raise BoxAdmissionError(
                f"the grant's max_sessions {grant.max_sessions} exceeds the policy's "
                f"{policy.max_sessions}"
            )
        if grant.max_managed_processes > policy.max_managed_processes:
            raise BoxAdmissionError(
                f"the grant's max_managed_processes {grant.max_managed_processes} exceeds the "
                f"policy's {policy.max_managed_processes}"
            )
        key = grant.workspace
        self._room_for(key)
        if grant.entitlement_revision <= self.revoked.get(key, 0):
            raise BoxAdmissionError(
                f"entitlement revision {grant.entitlement_revision} was revoked"
            )
        highest = self.revisions.get(key, 0)
        if grant.entitlement_revision < highest:
            raise BoxAdmissionError(
                f"stale entitlement revision {grant.entitlement_revision} (current {highest})"
            )
        if grant.execution_generation < self.generations.get(key, 0):
            raise BoxAdmissionError(
                f"stale execution generation {grant.execution_generation} "
                f"(current {self.generations[key]})"
            )
        caps = (grant.max_sessions, grant.max_managed_processes)
        previous_caps = self.caps.get(key)
        if grant.entitlement_revision == highest and previous_caps not in (None, caps):
            raise BoxAdmissionError("the grant's caps changed without a new entitlement revision")
        current = self.grants.get(key)
        if (
            current is not None
            and grant.entitlement_revision == current.entitlement_revision
            and grant.execution_generation == current.execution_generation
            and grant.expires_at < current.expires_at
        ):
            return _receipt(current), False  # an idempotent, shorter duplicate renewal
        self.grants[key] = grant
        self.revisions[key] = grant.entitlement_revision
        self.generations[key] = grant.execution_generation
        self.caps[key] = caps
        drop = (
            current is None
            or current.execution_generation != grant.execution_generation
            or grant.max_sessions == 0
        )
        return _receipt(grant), drop

    def revoke(self, revocation: AdmissionRevocation) -> RevocationReceipt:
        key = (revocation.instance_uuid, revocation.workspace_uuid)
        self._room_for(key)
        floor = max(self.revisions.get(key, 0), self.revoked.get(key, 0))
        if revocation.entitlement_revision < floor:
            raise BoxAdmissionError(
                f"stale revocation of revision {revocation.entitlement_revision} (current {floor})"
            )
        self.grants.pop(key, None)
        self.revisions[key] = max(self.revisions.get(key, 0), revocation.entitlement_revision)
        self.revoked[key] = max(self.revoked.get(key, 0), revocation.entitlement_revision)
        return RevocationReceipt(
            workspace_uuid=revocation.workspace_uuid,
            entitlement_revision=revocation.entitlement_revision,
        )

    def require(
        self, instance_uuid: str, workspace_uuid: str, generation: int, now: dt.datetime
    ) -> AdmissionGrant:
        """The live grant a request of this workspace and generation runs under."""
        grant = self.grants.get((instance_uuid, workspace_uuid))
        if grant is None:
            raise BoxAdmissionError("no sandbox admission grant for this workspace")
        if grant.expires_at <= now:
            raise BoxAdmissionError("the sandbox admission grant has expired")
        if grant.execution_generation != generation:
            raise BoxAdmissionError(
                f"the sandbox admission grant is for execution generation "
                f"{grant.execution_generation}, not {generation}"
            )
        if grant.max_sessions <= 0:
            raise BoxAdmissionError("the sandbox admission grant permits no session")
        return grant

    def expire(self, now: dt.datetime) -> list[tuple[str, str]]:
        """Drop the grants that expired; return their workspaces."""
        gone = [key for key, grant in self.grants.items() if grant.expires_at <= now]
        for key in gone:
            del self.grants[key]
        return gone


def _receipt(grant: AdmissionGrant) -> AdmissionReceipt:
    fields = grant.model_dump(exclude={"instance_uuid", "expires_at"})
    return AdmissionReceipt(**fields, expires_at=grant.expires_at.isoformat())


#: At most this many read-only mounts may accompany an admitted session.
MAX_ADMITTED_MOUNTS = 16


def canonical_workspace(default_workspace: str | None, namespace: str) -> str:
    """``<default_workspace>/tenants/<namespace>``, created (blocking); the admitted workspace."""
    if default_workspace is None:
        raise BoxReadinessError(
            "managed sandbox admission needs a shared workspace (box.local.default_workspace "
            "or box.local.host_root)"
        )
    tenants = os.path.join(default_workspace, "tenants")
    os.makedirs(tenants, exist_ok=True)
    path = os.path.join(os.path.realpath(tenants), namespace)
    os.makedirs(path, exist_ok=True)
    if os.path.realpath(path) != path:
        raise BoxAdmissionError("the managed workspace path escapes its tenants directory")
    return path


def admitted_spec(spec: BoxSpec, policy: AdmissionPolicy, workspace: str) -> BoxSpec:
    """The request as the policy allows it: runtime-owned ids, paths and limits.

    Refused are network access, another mount path or a workdir outside it, a host
    path other than the workspace's own, and writable or too many extra mounts; what
    the policy fixes (session id, limits, persistence) replaces what the request says.
    """
    if spec.network is BoxNetworkMode.ON:
        raise BoxAdmissionError("managed sandbox network access is disabled")
    if spec.mount_path != DEFAULT_MOUNT_PATH:
        raise BoxAdmissionError("the managed sandbox mount_path is runtime-owned")
    if spec.workdir != DEFAULT_MOUNT_PATH and not spec.workdir.startswith(DEFAULT_MOUNT_PATH + "/"):
        raise BoxAdmissionError("the managed sandbox workdir must stay under /workspace")
    if spec.host_path is not None and os.path.realpath(spec.host_path) != workspace:
        raise BoxAdmissionError("the managed sandbox host_path is runtime-owned")
    if len(spec.extra_mounts) > MAX_ADMITTED_MOUNTS:
        raise BoxAdmissionError(
            f"a managed sandbox takes at most {MAX_ADMITTED_MOUNTS} read-only mounts"
        )
    for mount in spec.extra_mounts:
        if mount.mode is not BoxHostMountMode.READ_ONLY:
            raise BoxAdmissionError("managed sandbox extra mounts must be read-only")
        if not mount.content_digest and not mount.mount_path.startswith(DEFAULT_MOUNT_PATH + "/"):
            raise BoxAdmissionError("managed sandbox extra mounts must stay under /workspace")
    return spec.model_copy(
        update={
            "session_id": policy.logical_session_id,
            "network": BoxNetworkMode.OFF,
            "host_path": workspace,
            "host_path_mode": BoxHostMountMode.READ_WRITE,
            "persistent": True,
            "timeout_sec": min(spec.timeout_sec, policy.max_timeout_sec),
            "cpus": policy.cpus,
            "memory_mb": policy.memory_mb,
            "pids_limit": policy.pids_limit,
            "read_only_rootfs": policy.read_only_rootfs,
            "workspace_quota_mb": policy.workspace_quota_mb,
        }
    )


def policy_from(config: BoxConfig) -> AdmissionPolicy:
    """The policy of ``box.admission`` (validated only when enforcement is required)."""
    if not config.admission.required:
        return AdmissionPolicy()
    try:
        return AdmissionPolicy.model_validate(config.admission.model_dump())
    except ValidationError as exc:
        problems = field_problems(exc, "box.admission")
        raise BoxValidationError(f"invalid sandbox admission policy: {problems}") from None


class Admission:
    """The runtime's admission state: the policy in force and the installed grants."""

    def __init__(self, config: BoxConfig) -> None:
        self.policy = policy_from(config)
        self.grants = Grants(max_records=config.limits.max_admission_records)

    @property
    def required(self) -> bool:
        return self.policy.required

    def check(self, config: BoxConfig) -> AdmissionPolicy:
        """The policy ``config`` would bring; enforcement cannot be switched off."""
        policy = policy_from(config)
        if self.policy.required and not policy.required:
            raise BoxAdmissionError(
                "sandbox admission enforcement cannot be disabled while the Box runs"
            )
        return policy

    def apply(self, config: BoxConfig) -> None:
        self.policy = self.check(config)
        self.grants.max_records = config.limits.max_admission_records

    def require(self, instance_uuid: str, workspace_uuid: str, generation: int) -> AdmissionGrant:
        return self.grants.require(instance_uuid, workspace_uuid, generation, dt.datetime.now(_UTC))

    def upsert(self, grant: AdmissionGrant) -> tuple[AdmissionReceipt, bool]:
        self._enabled()
        return self.grants.upsert(grant, self.policy, dt.datetime.now(_UTC))

    def revoke(self, revocation: AdmissionRevocation) -> RevocationReceipt:
        self._enabled()
        return self.grants.revoke(revocation)

    def expire(self) -> list[tuple[str, str]]:
        return self.grants.expire(dt.datetime.now(_UTC))

    def _enabled(self) -> None:
        if not self.required:
            raise BoxAdmissionError(
                "sandbox admission is not enabled on this Box (box.admission.required is false)"
            )
