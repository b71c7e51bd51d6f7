"""Run-scoped access to persistent state (needs ``available_apis.state``), and the
``binding`` storage area (Protocol v1; needs ``resources.storage.binding_storage``).

Answers are the host's dicts, typed by the catalogue (``state_get`` ->
``{"value": ...}``, ``state_set``/``state_delete`` -> ``{"success": bool}``,
``state_list`` -> ``{"keys": [...], "has_more": bool}``).
"""

from __future__ import annotations

from typing import Any

from langbot_plugin.api.entities.builtin.agent_runner.state import VALID_STATE_SCOPES
from langbot_plugin.api.proxies.agent_run.common import AgentRunProxyBase
from langbot_plugin.protocol.host_api import run_context as rc
from langbot_plugin.protocol.host_api.run_context import (
    StateDeleteResult,
    StateGetResult,
    StateListResult,
    StateSetResult,
)
from langbot_plugin.protocol.host_api.storage import BINDING_STORAGE

__all__ = ["AgentRunStateAPIMixin"]


class AgentRunStateAPIMixin(AgentRunProxyBase):
    """Read and write the run's scoped state directly (``state.updated`` results are
    the streamed alternative)."""

    def _check_scope(self, scope: str, key: str | None) -> None:
        self._require(rc.STATE_GET)
        if scope not in VALID_STATE_SCOPES:
            raise self._invalid(
                f"scope must be one of {', '.join(VALID_STATE_SCOPES)}, not {scope!r}",
                scope=scope,
            )
        if key is not None and (not isinstance(key, str) or not key):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise self._invalid("key must be a non-empty string", key=key)

    async def state_get(self, scope: str, key: str) -> StateGetResult:
        """``{"value": ...}``; the value is None when the key is not set."""
        self._check_scope(scope, key)
        return await self._send(rc.STATE_GET, rc.StateKeyParams(scope=scope, key=key))

    async def state_set(self, scope: str, key: str, value: Any) -> StateSetResult:
        """Store a JSON value; ``{"success": bool}``."""
        self._check_scope(scope, key)
        return await self._send(rc.STATE_SET, rc.StateSetParams(scope=scope, key=key, value=value))

    async def state_delete(self, scope: str, key: str) -> StateDeleteResult:
        """Delete a key; ``{"success": false}`` when it did not exist."""
        self._check_scope(scope, key)
        return await self._send(rc.STATE_DELETE, rc.StateKeyParams(scope=scope, key=key))

    async def state_list(
        self, scope: str, prefix: str | None = None, limit: int = 100
    ) -> StateListResult:
        """Keys of a scope (optionally with a prefix); ``{"keys", "has_more"}``."""
        self._check_scope(scope, None)
        params = rc.StateListParams(scope=scope, prefix=prefix, limit=limit)
        return await self._send(rc.STATE_LIST, params)

    # ------------------------------------------------------------------ binding storage

    async def set_binding_storage(self, key: str, value: bytes) -> None:
        """Store bytes under ``key`` in the storage of the run's binding (shared by the
        runs of this runner under the same bot/pipeline binding)."""
        await self._storage_set(BINDING_STORAGE, key, value)

    async def get_binding_storage(self, key: str) -> bytes:
        """Bytes stored under ``key`` in the binding's storage (``not_found`` if none)."""
        return await self._storage_get(BINDING_STORAGE, key)

    async def get_binding_storage_keys(self) -> list[str]:
        """The keys of the binding's storage."""
        return await self._storage_keys(BINDING_STORAGE)

    async def delete_binding_storage(self, key: str) -> None:
        """Delete ``key`` from the binding's storage."""
        await self._storage_delete(BINDING_STORAGE, key)
