"""The 0.7 shared-runtime slot actions: several installations in one worker process.

A worker started in shared mode (``shared-runtime-v1``) serves one *slot* per
installation, picked on both sides by the binding every request carries as its
envelope context: ``attach_plugin_slot`` (the reference's ``{plugin_settings}``; ours
may add ``plugin_dir`` so one worker serves different plugins), ``detach_plugin_slot``
and ``get_plugin_slot_container``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from langbot_plugin.protocol.containers import PluginContainer, PluginSettings
from langbot_plugin.protocol.spec import Empty, Params, Result, to_plugin

__all__ = [
    "ATTACH_PLUGIN_SLOT",
    "DETACH_PLUGIN_SLOT",
    "GET_PLUGIN_SLOT_CONTAINER",
    "SLOT_ACTIONS",
    "AttachSlotParams",
    "SlotContainer",
]


class AttachSlotParams(Params):
    plugin_settings: PluginSettings = Field(default_factory=PluginSettings)
    #: our runtime's extension: the plugin folder this slot loads (absent: the worker's own)
    plugin_dir: str | None = None


class SlotContainer(Result):
    enabled: bool = True
    priority: int = 0
    plugin_config: dict[str, Any] = Field(default_factory=dict[str, Any])
    plugin_container: PluginContainer


ATTACH_PLUGIN_SLOT = to_plugin(
    "attach_plugin_slot",
    AttachSlotParams,
    Empty,
    timeout=120,
    doc="load and initialize the plugin of the context's installation in a shared worker",
)
DETACH_PLUGIN_SLOT = to_plugin(
    "detach_plugin_slot",
    Empty,
    Empty,
    timeout=30,
    doc="stop serving the context's installation in a shared worker",
)
GET_PLUGIN_SLOT_CONTAINER = to_plugin(
    "get_plugin_slot_container",
    Empty,
    SlotContainer,
    timeout=30,
    doc="describe the slot of the context's installation",
)

SLOT_ACTIONS = (ATTACH_PLUGIN_SLOT, DETACH_PLUGIN_SLOT, GET_PLUGIN_SLOT_CONTAINER)
