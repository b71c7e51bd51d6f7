"""Actions the plugin runtime sends to the host.

Two kinds: the runtime's own calls (plugin settings, and the binary storage of
:mod:`.host_api.storage`), and the plugin -> host calls it forwards
(:mod:`.host_api`). :data:`FORWARDED` is the single table of forwarded actions; the
runtime builds every forwarding route from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from langbot_plugin.protocol.containers import PluginSettings
from langbot_plugin.protocol.host_api import HOST_API, storage
from langbot_plugin.protocol.spec import ActionSpec, Direction, Empty, Params

__all__ = [
    "FORWARDED",
    "GET_PLUGIN_SETTINGS",
    "INITIALIZE_PLUGIN_SETTINGS",
    "SCOPE_FIELDS",
    "Forward",
    "Owner",
    "PluginSettingsParams",
]


class PluginSettingsParams(Params):
    plugin_author: str
    plugin_name: str
    install_source: str | None = None
    install_info: dict[str, Any] | None = None


INITIALIZE_PLUGIN_SETTINGS = ActionSpec(
    "initialize_plugin_settings",
    PluginSettingsParams,
    Empty,
    direction=Direction.RUNTIME_TO_HOST,
    doc="create a debug plugin's settings at the host",
)
GET_PLUGIN_SETTINGS = ActionSpec(
    "get_plugin_settings",
    PluginSettingsParams,
    PluginSettings,
    direction=Direction.RUNTIME_TO_HOST,
    doc="a plugin's settings (installation, config, enabled)",
)

#: Payload keys a plugin may not set: the runtime derives scope and identity itself.
SCOPE_FIELDS = frozenset(
    {
        "context",
        "action_context",
        "instance_uuid",
        "workspace_uuid",
        "placement_generation",
        "execution_generation",
        "installation_uuid",
        "runtime_revision",
        "artifact_digest",
        "caller_plugin_identity",
    }
)


class Owner(Enum):
    """Whose storage a storage action touches (the host's binary storage owner)."""

    PLUGIN = "plugin"
    WORKSPACE = "workspace"


@dataclass(frozen=True, slots=True)
class Forward:
    """How one plugin -> host action is forwarded.

    ``target`` is the action the host receives (the plugin's own by default; plugin
    storage becomes the host's binary storage) and ``owner`` the storage owner the
    runtime adds. The wait and the files to pass on come from the spec
    (``timeout``, ``max_timeout``, ``files``).
    """

    spec: ActionSpec[Any, Any]
    target: ActionSpec[Any, Any] | None = None
    owner: Owner | None = None

    @property
    def action(self) -> str:
        return self.spec.name

    @property
    def host_spec(self) -> ActionSpec[Any, Any]:
        return self.target or self.spec


def _storage_rows(area: storage.StorageArea, owner: Owner) -> list[Forward]:
    pairs = (
        (area.set, storage.SET_BINARY_STORAGE),
        (area.get, storage.GET_BINARY_STORAGE),
        (area.keys, storage.GET_BINARY_STORAGE_KEYS),
        (area.delete, storage.DELETE_BINARY_STORAGE),
    )
    return [Forward(spec, target, owner) for spec, target in pairs]


_STORAGE_ROWS = [
    *_storage_rows(storage.PLUGIN_STORAGE, Owner.PLUGIN),
    *_storage_rows(storage.WORKSPACE_STORAGE, Owner.WORKSPACE),
]
_RENAMED = {row.spec.name for row in _STORAGE_ROWS}

#: Every plugin -> host action the runtime forwards, by the plugin's action name.
FORWARDED: dict[str, Forward] = {
    row.action: row
    for row in [
        *(Forward(spec) for spec in HOST_API if spec.name not in _RENAMED),
        *_STORAGE_ROWS,
    ]
}
