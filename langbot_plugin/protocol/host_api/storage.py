"""Storage actions: what a plugin asks for (its own and its workspace's storage, its
config files) and the host's binary storage the runtime turns them into; and the
``binding`` area of a run (seed 003's Protocol v1: the storage of the bot/pipeline
binding the run belongs to), which only a Protocol v1 host serves (our host library:
:mod:`langbot_plugin.host.binding_storage`; LangBot 4.11.2 has no such action)."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator

from langbot_plugin.protocol.host_api.common import RunScopedParams, to_host
from langbot_plugin.protocol.spec import ActionSpec, Direction, Result

__all__ = [
    "BINARY_STORAGE",
    "BINDING_STORAGE",
    "BINDING_STORAGE_ACTIONS",
    "DELETE_BINARY_STORAGE",
    "GET_BINARY_STORAGE",
    "GET_BINARY_STORAGE_KEYS",
    "GET_CONFIG_FILE",
    "PLUGIN_STORAGE",
    "SET_BINARY_STORAGE",
    "WORKSPACE_STORAGE",
    "Base64Text",
    "BinaryStorageKey",
    "BinaryStorageSet",
    "ConfigFile",
    "ConfigFileRef",
    "StorageArea",
    "StorageKey",
    "StorageKeys",
    "StorageSet",
    "StorageValue",
]


class StorageKey(RunScopedParams):
    key: str


class StorageSet(StorageKey):
    value_base64: str


def _base64(value: str) -> str:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError("not valid base64") from exc
    return value


Base64Text = Annotated[str, AfterValidator(_base64)]


class StorageValue(Result):
    value_base64: Base64Text

    @property
    def content(self) -> bytes:
        return base64.b64decode(self.value_base64)


class StorageKeys(Result):
    keys: list[str]


class BinaryStorageKey(RunScopedParams):
    """The runtime names the owner: the calling plugin, or its workspace."""

    key: str = ""
    owner_type: Literal["plugin", "workspace"] | str
    owner: str


class BinaryStorageSet(BinaryStorageKey):
    value_base64: str


class ConfigFileRef(RunScopedParams):
    file_key: str


class ConfigFile(Result):
    file_base64: Base64Text

    @property
    def content(self) -> bytes:
        return base64.b64decode(self.file_base64)


SET_BINARY_STORAGE = ActionSpec(
    "set_binary_storage", BinaryStorageSet, Result, direction=Direction.RUNTIME_TO_HOST
)
GET_BINARY_STORAGE = ActionSpec(
    "get_binary_storage", BinaryStorageKey, StorageValue, direction=Direction.RUNTIME_TO_HOST
)
GET_BINARY_STORAGE_KEYS = ActionSpec(
    "get_binary_storage_keys", BinaryStorageKey, StorageKeys, direction=Direction.RUNTIME_TO_HOST
)
DELETE_BINARY_STORAGE = ActionSpec(
    "delete_binary_storage", BinaryStorageKey, Result, direction=Direction.RUNTIME_TO_HOST
)

GET_CONFIG_FILE = to_host("get_config_file", ConfigFileRef, ConfigFile)


@dataclass(frozen=True, slots=True)
class StorageArea:
    """The four actions of one storage area (its owner on the host is ``area``)."""

    area: Literal["plugin", "workspace", "binding"]
    set: ActionSpec[StorageSet, Result]
    get: ActionSpec[StorageKey, StorageValue]
    keys: ActionSpec[RunScopedParams, StorageKeys]
    delete: ActionSpec[StorageKey, Result]

    @property
    def actions(self) -> tuple[ActionSpec[Any, Any], ...]:
        return (self.set, self.get, self.keys, self.delete)


def _area(area: Literal["plugin", "workspace", "binding"], doc: str = "") -> StorageArea:
    """The actions ``set_<area>_storage``, ``get_<area>_storage``,
    ``get_<area>_storage_keys`` and ``delete_<area>_storage``."""
    return StorageArea(
        area,
        to_host(f"set_{area}_storage", StorageSet, Result, doc=doc),
        to_host(f"get_{area}_storage", StorageKey, StorageValue, doc=doc),
        to_host(f"get_{area}_storage_keys", RunScopedParams, StorageKeys, doc=doc),
        to_host(f"delete_{area}_storage", StorageKey, Result, doc=doc),
    )


PLUGIN_STORAGE = _area("plugin")
WORKSPACE_STORAGE = _area("workspace")
BINARY_STORAGE = (
    SET_BINARY_STORAGE,
    GET_BINARY_STORAGE,
    GET_BINARY_STORAGE_KEYS,
    DELETE_BINARY_STORAGE,
)
#: Run-only: the storage of the binding (bot/pipeline and runner) the run belongs to.
BINDING_STORAGE = _area("binding", "needs a run granted binding storage (Protocol v1)")
BINDING_STORAGE_ACTIONS = BINDING_STORAGE.actions
