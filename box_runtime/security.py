"""The Box's security rules as pure functions (no I/O beyond resolving paths).

Mounts
    A host path may be mounted only when its *real* path (symlinks resolved) lies
    under one of the operator's ``allowed_mount_roots`` and touches nothing in the
    fixed deny set. The deny set cannot be re-allowed by any configuration: an
    allowed root that is denied is itself a configuration error. Every mount of a
    request is checked, the main one and each extra mount.

    Denied are: ``/`` and the home roots (``/home``, ``/Users``) themselves; system
    trees and everything under them (``/etc``, ``/proc``, ``/sys``, ``/dev``,
    ``/root``, ``/boot``, ``/run``, ``/var/run``, ``/usr``, ``/bin``, ``/sbin``,
    ``/lib*``); the container engines' sockets and data directories; and any path
    that *contains* one of those (``/var`` holds ``/var/lib/docker``).

Environment
    A request's variables must have shell-safe names and bounded size. The runtime's
    own environment reaches a sandbox only for names on the operator's passthrough
    allowlist, and never for the runtime's own secrets.

Output
    :class:`OutputCollector` keeps the first ``head_ratio`` and the last part of a
    stream within a byte budget while the stream flows, so a command printing
    gigabytes costs a bounded amount of memory. The cut is marked in the text.

Quotas
    :func:`check_quota` raises :class:`~box_runtime.errors.BoxQuotaExceededError`
    whose details carry the quota's name, ``limit`` and ``actual`` value.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from box_runtime.errors import BoxMountDeniedError, BoxQuotaExceededError, BoxValidationError

__all__ = [
    "ENGINE_PATHS",
    "EXACT_DENIED",
    "NEVER_PASSED_ENV",
    "RESERVED_SANDBOX_PATHS",
    "SUBTREE_DENIED",
    "OutputCollector",
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


# --------------------------------------------------------------------------- output


def _trim_incomplete_tail(data: bytes) -> bytes:
    """Drop a UTF-8 sequence cut at the end of ``data``."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:  # continuation byte: keep looking for the lead byte
            continue
        if byte & 0xE0 == 0xC0:
            needed = 2
        elif byte & 0xF0 == 0xE0:
            needed = 3
        elif byte & 0xF8 == 0xF0:
            needed = 4
        else:
            needed = 1
        return data[:-back] if needed > back else data
    return data


def _trim_incomplete_head(data: bytes) -> bytes:
    """Drop continuation bytes at the start of ``data`` (the rest of a cut sequence)."""
    start = 0
    while start < min(3, len(data)) and data[start] & 0xC0 == 0x80:
        start += 1
    return data[start:]


@dataclass(slots=True)
class CollectedOutput:
    """A stream's kept text, whether bytes were cut, and its full size in bytes."""

    text: str
    truncated: bool
    total_bytes: int


class OutputCollector:
    """Keeps the head and tail of a byte stream within ``limit`` bytes while it flows."""

    __slots__ = ("_head", "_tail", "head_limit", "limit", "tail_limit", "total")

    def __init__(self, limit: int, head_ratio: float = 0.6) -> None:
        if limit < 0 or not 0.0 <= head_ratio <= 1.0:
            raise ValueError("limit must be >= 0 and head_ratio within [0, 1]")
        self.limit = limit
        self.head_limit = int(limit * head_ratio)
        self.tail_limit = limit - self.head_limit
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        size = len(data)
        if not size:
            return
        self.total += size
        view = memoryview(data)
        room = self.head_limit - len(self._head)
        if room > 0:
            self._head += view[:room]
            view = view[room:]
        if len(view) and self.tail_limit:
            if len(view) >= self.tail_limit:
                self._tail[:] = view[len(view) - self.tail_limit :]
            else:
                self._tail += view
                # Trim in batches, not on every feed, so a long stream stays linear.
                if len(self._tail) > 2 * self.tail_limit:
                    del self._tail[: len(self._tail) - self.tail_limit]

    def result(self) -> CollectedOutput:
        tail = bytes(self._tail[-self.tail_limit :]) if self.tail_limit else b""
        if self.total <= self.limit:
            return CollectedOutput(
                (bytes(self._head) + tail).decode("utf-8", errors="replace"), False, self.total
            )
        head = _trim_incomplete_tail(bytes(self._head))
        tail = _trim_incomplete_head(tail)
        omitted = self.total - len(head) - len(tail)
        notice = f"\n\n... [{omitted} bytes truncated; {self.total} bytes in total] ...\n\n"
        text = (
            head.decode("utf-8", errors="replace") + notice + tail.decode("utf-8", errors="replace")
        )
        return CollectedOutput(text, True, self.total)
