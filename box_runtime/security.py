"""The Box's security rules as pure functions (no I/O beyond resolving paths).

A host path may be mounted only when its real path lies under an allowed root and
touches nothing of the fixed deny set (which no configuration can re-allow); a
request's environment is checked, and only passthrough names of the Box's own reach a
sandbox; :func:`check_quota` raises
:class:`~box_runtime.errors.BoxQuotaExceededError` with ``limit`` and ``actual``. The
deny set and the rules: docs/box.md, *Security model*.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable, Mapping

from box_runtime.errors import BoxMountDeniedError, BoxQuotaExceededError, BoxValidationError

__all__ = [
    "ENGINE_PATHS",
    "EXACT_DENIED",
    "NEVER_PASSED_ENV",
    "RESERVED_SANDBOX_PATHS",
    "SUBTREE_DENIED",
    "check_env",
    "check_mount",
    "check_quota",
    "check_sandbox_mount_paths",
    "denied_reason",
    "is_within",
    "normalize_allowed_roots",
    "passthrough_env",
    "real_path",
]

#: Denied themselves (mounting them would expose everything below), but a path below
#: them may be allowed: ``/home/alice/project`` can be an allowed root, ``/home`` cannot.
EXACT_DENIED = frozenset({"/", "/home", "/Users"})

#: Container engines' control sockets and data directories.
ENGINE_PATHS = frozenset(
    {
        "/var/run/docker.sock",
        "/run/docker.sock",
        "/var/lib/docker",
        "/run/containerd",
        "/var/lib/containerd",
        "/run/podman",
        "/var/lib/containers",
        "/run/crio",
        "/var/lib/crio",
    }
)

#: Denied together with everything under them.
SUBTREE_DENIED = frozenset(
    {
        "/etc",
        "/proc",
        "/sys",
        "/dev",
        "/root",
        "/boot",
        "/run",
        "/var/run",
        "/usr",
        "/bin",
        "/sbin",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        *ENGINE_PATHS,
    }
)

#: Paths inside a sandbox that a mount may not cover.
RESERVED_SANDBOX_PATHS = frozenset({"/", "/proc", "/sys", "/dev"})

#: Runtime variables that never reach a sandbox, whatever the passthrough list says.
NEVER_PASSED_ENV = frozenset(
    {
        "LANGBOT_BOX_CONTROL_TOKEN",
        "LANGBOT_BOX_CONFIG",
        "LANGBOT_BOX_TRUSTED_INSTANCE_UUID",
        "LANGBOT_PLUGIN_RUNTIME_CONTROL_TOKEN",
        "DOCKER_HOST",
        "DOCKER_CERT_PATH",
        "E2B_API_KEY",
    }
)

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MAX_ENV_VARS = 256
MAX_ENV_BYTES = 128 * 1024


# --------------------------------------------------------------------------- paths


def real_path(path: str, *, base: str | None = None) -> str:
    """The absolute path with every existing symlink resolved (``base`` for relative)."""
    if base is not None and not os.path.isabs(path):
        path = os.path.join(base, path)
    return os.path.realpath(os.path.abspath(path))


def is_within(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or lies below it (both absolute and normalized)."""
    if root == "/":
        return path.startswith("/")
    return path == root or path.startswith(root + "/")


def _denied_forms(entries: Iterable[str]) -> set[str]:
    forms: set[str] = set()
    for entry in entries:
        forms.add(posixpath.normpath(entry))
        forms.add(os.path.realpath(entry))  # /var/run -> /run, a moved docker root, ...
    return forms


def denied_reason(real: str, extra_denied: Iterable[str] = ()) -> str | None:
    """Why ``real`` (an already resolved path) may never be mounted, or ``None``."""
    exact = _denied_forms(EXACT_DENIED)
    subtree = _denied_forms([*SUBTREE_DENIED, *extra_denied])
    if real in exact:
        return f"{real} is a protected root"
    for denied in sorted(subtree):
        if is_within(real, denied):
            return f"{real} is inside the protected path {denied}"
        if is_within(denied, real):
            return f"{real} contains the protected path {denied}"
    return None


def normalize_allowed_roots(
    roots: Iterable[str], *, base: str | None = None, extra_denied: Iterable[str] = ()
) -> list[str]:
    """Resolve the operator's allowed roots; a root in the deny set is a config error."""
    extra = list(extra_denied)
    resolved: list[str] = []
    for root in roots:
        text = str(root).strip()
        if not text:
            continue
        real = real_path(text, base=base)
        reason = denied_reason(real, extra)
        if reason is not None:
            raise BoxValidationError(
                f"box.local.allowed_mount_roots entry {text!r} cannot be allowed: {reason}"
            )
        if real not in resolved:
            resolved.append(real)
    return resolved


def check_mount(
    host_path: str,
    allowed_roots: Iterable[str],
    *,
    field: str = "host_path",
    extra_denied: Iterable[str] = (),
) -> str:
    """Return the real path of ``host_path`` if it may be mounted; raise otherwise."""
    real = real_path(host_path)
    reason = denied_reason(real, extra_denied)
    if reason is not None:
        raise BoxMountDeniedError(f"{field} {host_path} is refused: {reason}")
    roots = list(allowed_roots)
    if not roots:
        raise BoxMountDeniedError(
            f"{field} {host_path} is refused: host mounts are disabled "
            "(box.local.allowed_mount_roots is empty)"
        )
    if not any(is_within(real, root) for root in roots):
        raise BoxMountDeniedError(
            f"{field} {host_path} is refused: {real} is outside the allowed mount roots "
            f"({', '.join(roots)})"
        )
    return real


def check_sandbox_mount_paths(paths: Iterable[str]) -> None:
    """Mount targets inside a sandbox must be distinct and must not cover system paths."""
    seen: set[str] = set()
    for path in paths:
        normalized = posixpath.normpath(path)
        if normalized in RESERVED_SANDBOX_PATHS or any(
            is_within(normalized, reserved) for reserved in RESERVED_SANDBOX_PATHS - {"/"}
        ):
            raise BoxValidationError(f"mount_path {path} would cover a system path of the sandbox")
        if normalized in seen:
            raise BoxValidationError(f"two mounts target the same mount_path {path}")
        seen.add(normalized)


# --------------------------------------------------------------------------- environment


def check_env(env: Mapping[str, str]) -> dict[str, str]:
    """Validate a request's variables: shell-safe names, no NUL, bounded count and size."""
    check_quota("env_vars", MAX_ENV_VARS, len(env))
    total = 0
    for name, value in env.items():
        if not _ENV_NAME.fullmatch(name):
            raise BoxValidationError(f"environment variable name {name!r} is not valid")
        if "\x00" in value:
            raise BoxValidationError(f"environment variable {name} contains NUL")
        total += len(name) + len(value.encode("utf-8")) + 2
    check_quota("env_bytes", MAX_ENV_BYTES, total)
    return dict(env)


def passthrough_env(allowed_names: Iterable[str], environ: Mapping[str, str]) -> dict[str, str]:
    """The runtime variables named on the allowlist (never the runtime's secrets)."""
    return {
        name: environ[name]
        for name in allowed_names
        if name in environ and name not in NEVER_PASSED_ENV and _ENV_NAME.fullmatch(name)
    }


# --------------------------------------------------------------------------- quotas


def check_quota(quota: str, limit: int | float, actual: int | float, *, unit: str = "") -> None:
    """Raise if ``actual`` exceeds ``limit`` (a limit of 0 or less means unlimited)."""
    if limit > 0 and actual > limit:
        suffix = f" {unit}" if unit else ""
        raise BoxQuotaExceededError(
            f"quota {quota} exceeded: {actual}{suffix} used, limit {limit}{suffix}",
            details={"quota": quota, "limit": limit, "actual": actual, "unit": unit},
        )
