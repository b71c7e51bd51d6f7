"""The Box link's header and environment names, and the checks a host runs on its side."""

from __future__ import annotations

from box_runtime.errors import BoxValidationError
from box_runtime.link_names import (
    CONTROL_TOKEN_ENV,
    CONTROL_TOKEN_HEADER,
    GENERATION_HEADER,
    INSTANCE_HEADER,
    INSTANCE_ID_PATTERN,
    MIN_TOKEN_CHARS,
    PROBE_PREFIX,
    TRUSTED_INSTANCE_ENV,
    WORKSPACE_HEADER,
)
from box_runtime.models import BoxSpec
from box_runtime.security import check_sandbox_mount_paths, denied_reason, real_path
from langbot_plugin.rpc.tokens import check_token

__all__ = [
    "BOX_CONTROL_TOKEN_ENV",
    "BOX_CONTROL_TOKEN_HEADER",
    "BOX_INSTANCE_HEADER",
    "BOX_PLACEMENT_GENERATION_HEADER",
    "BOX_SHARED_WORKSPACE_PROBE_PREFIX",
    "BOX_TRUSTED_INSTANCE_ENV",
    "BOX_WORKSPACE_HEADER",
    "CONTROL_TOKEN_MIN_LENGTH",
    "normalize_instance_uuid",
    "validate_control_token",
    "validate_sandbox_security",
]

BOX_CONTROL_TOKEN_ENV = CONTROL_TOKEN_ENV
BOX_TRUSTED_INSTANCE_ENV = TRUSTED_INSTANCE_ENV
BOX_CONTROL_TOKEN_HEADER = CONTROL_TOKEN_HEADER
BOX_INSTANCE_HEADER = INSTANCE_HEADER
BOX_WORKSPACE_HEADER = WORKSPACE_HEADER
BOX_PLACEMENT_GENERATION_HEADER = GENERATION_HEADER
BOX_SHARED_WORKSPACE_PROBE_PREFIX = PROBE_PREFIX
CONTROL_TOKEN_MIN_LENGTH = MIN_TOKEN_CHARS


def normalize_instance_uuid(value: str) -> str:
    """``value`` stripped, if it is an instance id the Box accepts (else ``ValueError``)."""
    normalized = str(value or "").strip()
    if not INSTANCE_ID_PATTERN.fullmatch(normalized):
        raise ValueError("A valid trusted LangBot instance UUID is required")
    return normalized


def validate_control_token(value: str) -> str:
    """``value`` stripped, if the Box would accept it as its control token."""
    return check_token(value, name=CONTROL_TOKEN_ENV)


def validate_sandbox_security(spec: BoxSpec) -> None:
    """Refuse a spec whose host mounts the Box would refuse (same rules, checked early)."""
    paths = [spec.host_path] if spec.host_path else []
    paths += [mount.host_path for mount in spec.extra_mounts]
    for path in paths:
        reason = denied_reason(real_path(path))
        if reason is not None:
            raise BoxValidationError(f"host path {path} is blocked for security: {reason}")
    check_sandbox_mount_paths(mount.mount_path for mount in spec.extra_mounts)
