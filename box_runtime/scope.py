"""The host-owned Box session scope (seed 000): ``lb-box-<64 lowercase hex>``.

:func:`scoped_session_id` hashes the canonical scope (sorted compact JSON of the known
dimensions, after a domain label), so raw platform identifiers never reach the Box;
:func:`workspace_namespace` names a workspace's durable data on disk (``ws-`` and 24
hex digits, the reference's layout). See docs/box.md, *Session ids and scope*.
"""

from __future__ import annotations

import hashlib
import json
import re

from box_runtime.errors import BoxValidationError

__all__ = [
    "MCP_SHARED_SESSION_ID",
    "SCOPE_DOMAIN",
    "SESSION_ID_PATTERN",
    "canonical_scope",
    "check_session_id",
    "is_scoped_session_id",
    "placement_session_id",
    "scoped_session_id",
    "workspace_namespace",
]

SCOPE_DOMAIN = "langbot.box.session-scope.v1"
MCP_SHARED_SESSION_ID = "mcp-shared"
SESSION_ID_PATTERN = re.compile(r"^lb-box-[0-9a-f]{64}$")
_REQUIRED = ("target_type", "target_id")
_MAX_DIMENSION_CHARS = 1024


def workspace_namespace(instance_uuid: str, workspace_uuid: str) -> str:
    """The filesystem-safe namespace of one workspace (placement generation left out)."""
    instance, workspace = instance_uuid.strip(), workspace_uuid.strip()
    if not instance or not workspace:
        raise BoxValidationError("a workspace namespace needs the instance and workspace ids")
    digest = hashlib.sha256(f"{instance}\0{workspace}".encode()).hexdigest()
    return f"ws-{digest[:24]}"


def canonical_scope(
    *,
    target_type: str,
    target_id: str,
    instance_id: str | None = None,
    workspace_id: str | None = None,
    bot_id: str | None = None,
    platform_adapter: str | None = None,
    thread_id: str | None = None,
) -> str:
    """The canonical JSON text of a scope; fails closed on empty or malformed values."""
    values = {
        "instance_id": instance_id,
        "workspace_id": workspace_id,
        "bot_id": bot_id,
        "platform_adapter": platform_adapter,
        "target_type": target_type,
        "target_id": target_id,
        "thread_id": thread_id,
    }
    scope: dict[str, str] = {}
    for name, value in values.items():
        if value is None:
            if name in _REQUIRED:
                raise BoxValidationError(f"Box scope needs {name}")
            continue
        if not isinstance(value, str):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise BoxValidationError(f"Box scope {name} must be a string")
        text = value.strip()
        if not text:
            raise BoxValidationError(f"Box scope {name} must not be empty")
        if len(text) > _MAX_DIMENSION_CHARS:
            raise BoxValidationError(f"Box scope {name} is longer than {_MAX_DIMENSION_CHARS}")
        scope[name] = text
    return json.dumps(scope, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def scoped_session_id(
    *,
    target_type: str,
    target_id: str,
    instance_id: str | None = None,
    workspace_id: str | None = None,
    bot_id: str | None = None,
    platform_adapter: str | None = None,
    thread_id: str | None = None,
) -> str:
    """The Box session id of a host scope: ``lb-box-`` + SHA-256 of the canonical scope."""
    text = canonical_scope(
        target_type=target_type,
        target_id=target_id,
        instance_id=instance_id,
        workspace_id=workspace_id,
        bot_id=bot_id,
        platform_adapter=platform_adapter,
        thread_id=thread_id,
    )
    digest = hashlib.sha256(f"{SCOPE_DOMAIN}\n{text}".encode()).hexdigest()
    return f"lb-box-{digest}"


def is_scoped_session_id(session_id: str) -> bool:
    """Whether ``session_id`` has the canonical ``lb-box-<64 hex>`` shape."""
    return SESSION_ID_PATTERN.fullmatch(session_id) is not None


def check_session_id(session_id: str, *, strict: bool) -> str:
    """Return ``session_id``; in strict mode refuse anything but scoped ids and ``mcp-shared``."""
    if strict and not (is_scoped_session_id(session_id) or session_id == MCP_SHARED_SESSION_ID):
        raise BoxValidationError(
            "session_id must be lb-box-<64 lowercase hex> or mcp-shared "
            "(strict session ids are enabled: box.sessions.strict_ids)"
        )
    return session_id


def placement_session_id(
    instance_uuid: str, workspace_uuid: str, generation: int, session_id: str
) -> str:
    """The id a 0.7 host puts in a relay URL for one of its sessions.

    The released host's client (``langbot-plugin`` 0.7.16) addresses the relay with a
    "physical" id: ``ws-<first 24 hex of sha256(instance NUL workspace)>-g<generation>-``
    followed by the session id with every run of characters outside
    ``[A-Za-z0-9_.-]`` replaced by ``-``. The relay maps it back to the session
    (:meth:`box_runtime.runtime.BoxRuntime.relay_session`); several sessions of one
    placement mapping to the same id are refused there as ambiguous.
    """
    digest = hashlib.sha256(f"{instance_uuid}\0{workspace_uuid}".encode()).hexdigest()[:24]
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", session_id).strip("-")
    return f"ws-{digest}-g{generation}-{safe}"
