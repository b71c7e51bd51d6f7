"""When the unsandboxed ``host`` backend may serve, and as whom its commands run.

Checked when the Box starts (``lbp box`` refuses to start), at each ``box_init`` (the
call fails) and at backend selection (no backend is selected); a refusal raises
:class:`~box_runtime.errors.BoxHostBackendRefusedError` whose ``details.reason`` names
the rule. The rules and reasons: docs/box.md, *Host (NOT a sandbox)*.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from box_runtime.config import BoxConfig, HostConfig
from box_runtime.errors import BoxHostBackendRefusedError
from box_runtime.portable import missing_modules
from langbot_plugin.rpc.loopback import is_loopback

__all__ = ["NOT_A_SANDBOX", "HostIdentity", "check_host_backend", "resolve_identity"]

#: What the log, ``box_status`` and ``box_get_backend_info`` say about the backend.
NOT_A_SANDBOX = (
    "the host backend is NOT a sandbox: commands run as ordinary processes on the Box's "
    "machine, with its network and every file their user can read"
)


@dataclass(frozen=True, slots=True)
class HostIdentity:
    """Who commands run as: a fixed ``uid``/``gid``, a uid per session, or the Box itself."""

    #: ``None``: no switch (the Box's own user), or a per-session uid (``uid_range``).
    uid: int | None
    gid: int | None
    #: Each session gets its own uid (and the same gid) from this range.
    uid_range: range | None = None

    @property
    def switches(self) -> bool:
        return self.uid is not None or self.uid_range is not None


def _refused(reason: str, message: str) -> BoxHostBackendRefusedError:
    return BoxHostBackendRefusedError(
        f"box.backend 'host' is refused: {message}", details={"reason": reason}
    )


def _user(text: str) -> tuple[int, int]:
    """``(uid, gid)`` of ``name``, ``uid`` or ``uid:gid``."""
    import pwd  # POSIX only (check_host_backend refuses first where it is missing)

    name, _, group = text.strip().partition(":")
    if name.isdigit():
        uid = int(name)
        try:
            gid = pwd.getpwuid(uid).pw_gid
        except KeyError:
            gid = uid
    else:
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            raise _refused("bad_user", f"box.host.user {text!r} names no user") from None
        uid, gid = entry.pw_uid, entry.pw_gid
    if group:
        if not group.isdigit():
            raise _refused("bad_user", f"box.host.user {text!r}: the group must be a number")
        gid = int(group)
    return uid, gid


def resolve_identity(config: HostConfig, *, euid: int | None = None) -> HostIdentity:
    """Who the commands run as under ``config`` for a Box running as ``euid``."""
    euid = os.geteuid() if euid is None else euid
    uid_range = config.uid_range
    if euid == 0:
        if uid_range is not None:
            return HostIdentity(None, None, uid_range)
        uid, gid = _user(config.user)
        if uid == 0 or gid == 0:
            raise _refused("root_user", "commands never run as root (set box.host.user)")
        return HostIdentity(uid, gid)
    if uid_range is not None:
        raise _refused(
            "cannot_switch_user",
            f"box.host.session_uids needs a Box running as root (this one is uid {euid})",
        )
    if config.run_as_box_user:
        return HostIdentity(None, None)
    uid, _ = _user(config.user)
    if uid == euid:
        return HostIdentity(None, None)
    raise _refused(
        "cannot_switch_user",
        f"the Box runs as uid {euid} and cannot run commands as box.host.user "
        f"{config.user!r}; set box.host.run_as_box_user: true to run them as the Box's "
        "own user, or start the Box as root",
    )


def check_host_backend(config: BoxConfig, listen_host: str | None) -> HostIdentity:
    """Raise unless the host backend may serve under ``config``; its identity if so."""
    missing = missing_modules("pwd", "resource")
    if os.name != "posix" or missing:
        lacking = ", ".join(missing) or "POSIX"
        raise _refused(
            "not_posix",
            f"it switches users and sets limits the POSIX way (no {lacking} module on this "
            "system); use docker, podman or e2b here",
        )
    if not config.section("host", HostConfig).allow_unsandboxed:
        raise _refused(
            "not_opted_in",
            "it runs commands unsandboxed; set box.host.allow_unsandboxed: true as well "
            "to accept that, or use docker, podman or nsjail",
        )
    if config.admission.required:
        raise _refused("managed", "managed admission (box.admission.required) needs a sandbox")
    if listen_host is not None and not is_loopback(listen_host):
        raise _refused(
            "beyond_loopback",
            f"the Box listens on {listen_host}; the unsandboxed backend serves only a Box "
            "bound to a loopback address (--host 127.0.0.1)",
        )
    return resolve_identity(config.section("host", HostConfig))
