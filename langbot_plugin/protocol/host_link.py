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
from langbot_plugin.protocol.host_api import (
    artifacts,
    box,
    knowledge,
    messaging,
    models,
    run_context,
    run_ledger,
    storage,
)
from langbot_plugin.protocol.scope import SCOPE_FIELDS as ENVELOPE_SCOPE_FIELDS
from langbot_plugin.protocol.spec import ActionSpec, Direction, Empty, Params

__all__ = [
    "FORWARDED",
    "GET_PLUGIN_SETTINGS",
    "HOST_API",
    "INITIALIZE_PLUGIN_SETTINGS",
    "RUNTIME_ANSWERS",
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

#: Every plugin -> host action, in the order the docs list them.
HOST_API: tuple[ActionSpec[Any, Any], ...] = (
    messaging.REPLY_MESSAGE,
    messaging.GET_BOT_UUID,
    messaging.SET_QUERY_VAR,
    messaging.GET_QUERY_VAR,
    messaging.GET_QUERY_VARS,
    messaging.CREATE_NEW_CONVERSATION,
    messaging.GET_LANGBOT_VERSION,
    messaging.GET_BOTS,
    messaging.GET_BOT_INFO,
    messaging.SEND_MESSAGE,
    messaging.CALL_PLATFORM_API,
    messaging.REPLY_STREAM,
    models.GET_LLM_MODELS,
    models.INVOKE_LLM,
    models.INVOKE_LLM_STREAM,
    models.COUNT_TOKENS,
    models.INVOKE_EMBEDDING,
    models.INVOKE_RERANK,
    models.CALL_TOOL,
    models.GET_TOOL_DETAIL,
    knowledge.VECTOR_UPSERT,
    knowledge.VECTOR_SEARCH,
    knowledge.VECTOR_DELETE,
    knowledge.VECTOR_LIST,
    knowledge.GET_KNOWLEDGE_FILE_STREAM,
    knowledge.LIST_KNOWLEDGE_BASES,
    knowledge.LIST_PIPELINE_KNOWLEDGE_BASES,
    knowledge.RETRIEVE_KNOWLEDGE,
    knowledge.RETRIEVE_KNOWLEDGE_BASE,
    knowledge.LIST_PARSERS,
    knowledge.INVOKE_PARSER,
    *storage.PLUGIN_STORAGE.actions,
    *storage.WORKSPACE_STORAGE.actions,
    storage.GET_CONFIG_FILE,
    *storage.BINDING_STORAGE_ACTIONS,
    *run_context.RUN_CONTEXT_ACTIONS,
    *artifacts.ARTIFACT_ACTIONS,
    *run_ledger.RUN_ACTIONS,
    *run_ledger.ADMIN_ACTIONS,
    *box.BOX_ACTIONS,
)

#: Plugin calls the runtime answers itself, from the plugins of the caller's workspace.
RUNTIME_ANSWERS: tuple[ActionSpec[Any, Any], ...] = (
    messaging.LIST_PLUGINS_MANIFEST,
    messaging.LIST_COMMANDS,
    messaging.LIST_TOOLS,
)

#: Payload keys a plugin may not set: the runtime derives scope and identity itself.
SCOPE_FIELDS = frozenset(
    {
        *ENVELOPE_SCOPE_FIELDS,
        "context",
        "action_context",
        "execution_generation",
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
    """set, get, keys and delete of ``area``, each onto its binary storage action."""
    pairs = zip(area.actions, storage.BINARY_STORAGE, strict=True)
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
