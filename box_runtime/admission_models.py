"""The wire and configuration models of sandbox admission (see :mod:`box_runtime.admission`).

Grants and revocations are authority the host installs, so they are strict: unknown
keys, booleans passed as integers, empty ids and naive expiry times are refused.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from langbot_plugin.protocol.spec import Result

__all__ = [
    "MAX_GRANT_TTL_SEC",
    "AdmissionGrant",
    "AdmissionPolicy",
    "AdmissionReceipt",
    "AdmissionRevocation",
    "RevocationReceipt",
]

_UTC = dt.UTC
#: The hard ceiling of a grant's lifetime, whatever the policy says.
MAX_GRANT_TTL_SEC = 300


def _strict_int(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("must be an integer")
    return value


def _identifier(value: str) -> str:
    value = value.strip()
    if not value:
        raise ValueError("must not be empty")
    return value


class AdmissionPolicy(BaseModel):
    """The deployment's hard policy for admitted sandboxes (``box.admission``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    required: bool = False
    logical_session_id: Literal["global"] = "global"
    required_backend: Literal["nsjail"] = "nsjail"
    max_sessions: int = Field(default=1, ge=0, le=1)
    max_managed_processes: int = Field(default=0, ge=0, le=0)
    max_grant_ttl_sec: int = Field(default=MAX_GRANT_TTL_SEC, gt=0, le=MAX_GRANT_TTL_SEC)
    max_timeout_sec: int = Field(default=120, gt=0)
    cpus: float = Field(default=1.0, gt=0)
    memory_mb: int = Field(default=512, ge=32)
    pids_limit: int = Field(default=128, gt=0)
    read_only_rootfs: bool = True
    workspace_quota_mb: int = Field(default=0, ge=0)
    readiness_cache_sec: int = Field(default=15, ge=0)

    check_ints = field_validator(
        "max_sessions",
        "max_managed_processes",
        "max_grant_ttl_sec",
        "max_timeout_sec",
        "memory_mb",
        "pids_limit",
        "workspace_quota_mb",
        "readiness_cache_sec",
        mode="before",
    )(_strict_int)


class AdmissionGrant(BaseModel):
    """One workspace's authority to use its managed sandbox until ``expires_at``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    instance_uuid: str
    workspace_uuid: str
    execution_generation: int = Field(ge=1)
    entitlement_revision: int = Field(ge=1)
    expires_at: dt.datetime
    max_sessions: int = Field(ge=0)
    max_managed_processes: int = Field(ge=0)

    check_ids = field_validator("instance_uuid", "workspace_uuid")(_identifier)
    check_ints = field_validator(
        "execution_generation",
        "entitlement_revision",
        "max_sessions",
        "max_managed_processes",
        mode="before",
    )(_strict_int)

    @field_validator("expires_at")
    @classmethod
    def _aware(cls, value: dt.datetime) -> dt.datetime:
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError("expires_at must include a timezone")
        return value.astimezone(_UTC)

    @property
    def workspace(self) -> tuple[str, str]:
        return self.instance_uuid, self.workspace_uuid


class AdmissionRevocation(BaseModel):
    """A tombstone: every grant of the workspace up to ``entitlement_revision`` is void."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    instance_uuid: str
    workspace_uuid: str
    entitlement_revision: int = Field(ge=1)

    check_ids = field_validator("instance_uuid", "workspace_uuid")(_identifier)
    check_ints = field_validator("entitlement_revision", mode="before")(_strict_int)


class AdmissionReceipt(Result):
    installed: bool = True
    workspace_uuid: str
    execution_generation: int
    entitlement_revision: int
    max_sessions: int
    max_managed_processes: int
    expires_at: str


class RevocationReceipt(Result):
    revoked: bool = True
    workspace_uuid: str
    entitlement_revision: int
