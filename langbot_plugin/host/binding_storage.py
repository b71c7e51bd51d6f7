"""The ``binding`` storage area (seed 003's Protocol v1) in our host library: bytes under
keys, shared by every run of one runner under one binding (the bot/pipeline binding
the run belongs to, :meth:`~langbot_plugin.host.grants.RunScope.binding_key`), kept
in the host's SQLite database.

A run may use it only when granted (``ctx.resources.storage.binding_storage``, which
:class:`~langbot_plugin.host.run_host.RunHost` sets when the runner declares
``permissions.storage: [binding]``); the four actions
(``set/get/delete_binding_storage``, ``get_binding_storage_keys``) exist only for runs.

Limits (constructor arguments): a key is 1 to 256 characters without control
characters; a value at most :data:`MAX_VALUE_BYTES`; a binding at most
:data:`MAX_KEYS` keys. A missing key is ``not_found``, as in the other areas.
"""

from __future__ import annotations

import base64
import binascii
import sqlite3
from collections.abc import Callable, Mapping
from typing import Any

from langbot_plugin.host.errors import StateQuotaError
from langbot_plugin.host.registry import RunSession
from langbot_plugin.host.sqlite import HostDatabase
from langbot_plugin.host.state_store import checked_key
from langbot_plugin.protocol.host_api import storage
from langbot_plugin.protocol.host_api.common import RunScopedParams
from langbot_plugin.protocol.spec import ActionTable, Result
from langbot_plugin.rpc import RequestContext
from langbot_plugin.rpc.errors import InvalidParamsError, MessageTooLargeError, NotFoundError

__all__ = [
    "MAX_KEYS",
    "MAX_KEY_CHARS",
    "MAX_VALUE_BYTES",
    "BindingStorage",
    "grant_binding_storage",
]

#: Bytes one value may hold (its base64 must fit one frame with room to spare).
MAX_VALUE_BYTES = 512 * 1024
MAX_KEY_CHARS = 256
MAX_KEYS = 1000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS binding_storage (
    binding_key TEXT NOT NULL,
    storage_key TEXT NOT NULL,
    value BLOB NOT NULL,
    PRIMARY KEY (binding_key, storage_key)
) WITHOUT ROWID;
"""

#: ``session(run_id, ctx)``: the caller's live run, granted binding storage.
Authorize = Callable[[object, RequestContext], RunSession]


def grant_binding_storage(resources: dict[str, Any], declaration: Mapping[str, Any] | None) -> None:
    """Grant ``binding`` storage in a run's ``resources`` when the runner's Protocol v1
    declaration asks for it (``permissions.storage: [binding]``), unless the host's
    resources refuse it (``binding_storage: false``); never without the declaration."""
    permissions = (declaration or {}).get("permissions")
    asked = permissions.get("storage") if isinstance(permissions, dict) else None
    declared = isinstance(asked, list) and "binding" in asked
    current = resources.get("storage")
    areas: dict[str, Any] = dict(current) if isinstance(current, Mapping) else {}  # pyright: ignore[reportUnknownArgumentType]
    if declared and areas.get("binding_storage", True) is not False:
        areas["binding_storage"] = True
    else:
        areas.pop("binding_storage", None)
    resources["storage"] = areas


def _key(key: str) -> str:
    return checked_key(key, MAX_KEY_CHARS, "storage")


class BindingStorage:
    """Bytes by key per binding (see the module docstring)."""

    def __init__(
        self, db: HostDatabase, *, max_value_bytes: int = MAX_VALUE_BYTES, max_keys: int = MAX_KEYS
    ) -> None:
        self.db = db
        self.max_value_bytes = max_value_bytes
        self.max_keys = max_keys
        db.ensure(_SCHEMA)

    async def set(self, binding: str, key: str, value: bytes) -> None:
        stored = _key(key)
        if len(value) > self.max_value_bytes:
            raise MessageTooLargeError(
                f"value has {len(value)} bytes, the limit is {self.max_value_bytes}",
                details={"limit": self.max_value_bytes, "size": len(value)},
            )
        limit = self.max_keys

        def write(conn: sqlite3.Connection) -> None:
            exists = conn.execute(
                "SELECT 1 FROM binding_storage WHERE binding_key = ? AND storage_key = ?",
                (binding, stored),
            ).fetchone()
            if exists is None:
                (count,) = conn.execute(
                    "SELECT COUNT(*) FROM binding_storage WHERE binding_key = ?", (binding,)
                ).fetchone()
                if count >= limit:
                    raise StateQuotaError(
                        f"binding storage already holds {limit} keys",
                        details={"limit": limit, "area": "binding"},
                    )
            conn.execute(
                "INSERT INTO binding_storage VALUES (?, ?, ?) ON CONFLICT"
                " (binding_key, storage_key) DO UPDATE SET value = excluded.value",
                (binding, stored, value),
            )

        await self.db.run(write)

    async def get(self, binding: str, key: str) -> bytes:
        row = await self.db.one(
            "SELECT value FROM binding_storage WHERE binding_key = ? AND storage_key = ?",
            (binding, _key(key)),
        )
        if row is None:
            raise NotFoundError(f"Storage with key {key} not found", details={"key": key})
        return bytes(row[0])

    async def keys(self, binding: str) -> list[str]:
        rows = await self.db.all(
            "SELECT storage_key FROM binding_storage WHERE binding_key = ? ORDER BY storage_key",
            (binding,),
        )
        return [str(row[0]) for row in rows]

    async def delete(self, binding: str, key: str) -> None:
        await self.db.write(
            "DELETE FROM binding_storage WHERE binding_key = ? AND storage_key = ?",
            (binding, _key(key)),
        )

    def register(self, table: ActionTable, authorize: Authorize) -> None:
        """Serve the four actions in ``table`` for runs ``authorize`` lets through,
        each granted ``binding`` storage (``resource_not_granted`` otherwise)."""

        def binding(run_id: object, ctx: RequestContext) -> str:
            session = authorize(run_id, ctx)
            session.grants.require_storage("binding", session.run_id)
            return session.scope.binding_key(session.runner_id)

        async def set_value(p: storage.StorageSet, ctx: RequestContext) -> Result:
            where = binding(p.run_id, ctx)
            try:
                value = base64.b64decode(p.value_base64, validate=True)
            except (binascii.Error, ValueError):
                raise InvalidParamsError("value_base64 is not valid base64") from None
            await self.set(where, p.key, value)
            return Result()

        async def get_value(p: storage.StorageKey, ctx: RequestContext) -> storage.StorageValue:
            value = await self.get(binding(p.run_id, ctx), p.key)
            return storage.StorageValue(value_base64=base64.b64encode(value).decode())

        async def list_keys(p: RunScopedParams, ctx: RequestContext) -> storage.StorageKeys:
            return storage.StorageKeys(keys=await self.keys(binding(p.run_id, ctx)))

        async def delete_value(p: storage.StorageKey, ctx: RequestContext) -> Result:
            await self.delete(binding(p.run_id, ctx), p.key)
            return Result()

        table.add(storage.BINDING_STORAGE.set, set_value)
        table.add(storage.BINDING_STORAGE.get, get_value)
        table.add(storage.BINDING_STORAGE.keys, list_keys)
        table.add(storage.BINDING_STORAGE.delete, delete_value)
