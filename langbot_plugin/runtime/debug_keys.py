"""Per-workspace debug keys for ``lbp run``.

``get_debug_info`` hands the host a key for the workspace named in its context; a
plugin under development presents it when it connects to the debug port. A key
lives two hours, is reused until then, and identifies exactly one workspace. Keys
are kept in a file readable only by the runtime's user, so a plugin under
development reconnects with the same key after the runtime restarts.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from langbot_plugin.protocol.scope import ActionScope

__all__ = ["DebugKey", "DebugKeys"]

DEFAULT_TTL_SECONDS = 2 * 60 * 60
_RENEW_BEFORE_SECONDS = 10 * 60


@dataclass(frozen=True, slots=True)
class DebugKey:
    key: str
    expires_at: float
    scope: ActionScope

    @property
    def expires_at_iso(self) -> str:
        stamp = datetime.fromtimestamp(self.expires_at, tz=UTC)
        return stamp.isoformat(timespec="microseconds").replace("+00:00", "Z")


class DebugKeys:
    def __init__(self, ttl_seconds: float = DEFAULT_TTL_SECONDS, path: Path | None = None) -> None:
        self.ttl_seconds = ttl_seconds
        self.path = path
        self._keys: dict[tuple[str | None, str | None], DebugKey] = {}
        self._load()

    def _load(self) -> None:
        if self.path is None or not self.path.is_file():
            return
        try:
            entries = json.loads(self.path.read_text(encoding="utf-8"))
            now = time.time()
            for entry in entries:
                scope = ActionScope.model_validate(entry["scope"])
                key = DebugKey(str(entry["key"]), float(entry["expires_at"]), scope)
                if key.expires_at > now:
                    self._keys[key.scope.workspace_key] = key
        except (OSError, ValueError, KeyError, TypeError) as exc:
            logging.getLogger("langbot_plugin.runtime").warning("ignoring %s: %s", self.path, exc)

    def _save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        staging = self.path.with_suffix(".tmp")
        payload = [
            {"key": k.key, "expires_at": k.expires_at, "scope": k.scope.as_context()}
            for k in self._keys.values()
        ]
        fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(payload, handle)
        staging.replace(self.path)

    def issue(self, scope: ActionScope) -> DebugKey:
        """The workspace's current key; a fresh one when none is left or it expires soon."""
        workspace = ActionScope.model_validate(scope.workspace_context())
        now = time.time()
        current = self._keys.get(workspace.workspace_key)
        if current is not None and current.expires_at - now > _RENEW_BEFORE_SECONDS:
            return current
        issued = DebugKey(secrets.token_urlsafe(48), now + self.ttl_seconds, workspace)
        self._keys[workspace.workspace_key] = issued
        self._save()
        return issued

    def lookup(self, presented: str) -> DebugKey | None:
        """The live key equal to ``presented`` (compared in constant time), if any."""
        now = time.time()
        found: DebugKey | None = None
        for key in self._keys.values():
            if hmac.compare_digest(key.key.encode(), presented.encode()) and key.expires_at > now:
                found = key
        return found
