"""Actions the plugin runtime sends to the host.

Two kinds: the runtime's own calls (plugin settings), and the plugin -> host calls it
forwards. :data:`FORWARDED` is the single table of forwarded actions; the runtime
builds every forwarding route from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from langbot_plugin.protocol.containers import PluginSettings
from langbot_plugin.protocol.spec import ActionSpec, Empty, Params

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


INITIALIZE_PLUGIN_SETTINGS = ActionSpec("initialize_plugin_settings", PluginSettingsParams, Empty)
GET_PLUGIN_SETTINGS = ActionSpec("get_plugin_settings", PluginSettingsParams, PluginSettings)

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

    ``host_action`` renames the action (plugin storage becomes the host's binary
    storage); ``owner`` adds the storage owner; ``file_key`` names a result key whose
    file the host pushed to the runtime and the runtime must pass on to the plugin.
    A ``timeout`` key in the payload (seconds) overrides ``timeout`` up to ``max_timeout``.
    """

    action: str
    timeout: float = 30.0
    stream: bool = False
    host_action: str | None = None
    owner: Owner | None = None
    file_key: str | None = None
    max_timeout: float = 600.0

    @property
    def target(self) -> str:
        return self.host_action or self.action


def _rows(timeout: float, *names: str) -> list[Forward]:
    return [Forward(name, timeout) for name in names]


FORWARDED: dict[str, Forward] = {
    row.action: row
    for row in [
        # messaging and query-scoped helpers
        Forward("reply_message", 180),
        *_rows(30, "get_bot_uuid", "set_query_var", "get_query_var", "get_query_vars"),
        *_rows(30, "create_new_conversation", "get_langbot_version", "get_bots", "get_bot_info"),
        *_rows(30, "send_message", "call_platform_api", "reply_stream"),
        # models
        Forward("get_llm_models", 30),
        Forward("invoke_llm", 120),
        Forward("invoke_llm_stream", 120, stream=True),
        Forward("count_tokens", 30),
        Forward("invoke_embedding", 60),
        Forward("invoke_rerank", 60),
        # tools
        Forward("call_tool", 180),
        Forward("get_tool_detail", 30),
        # knowledge, vectors, parsers
        Forward("vector_upsert", 60),
        *_rows(30, "vector_search", "vector_delete", "vector_list"),
        Forward("get_knowledge_file_stream", 60, file_key="file_key"),
        *_rows(30, "list_knowledge_bases", "list_pipeline_knowledge_bases"),
        *_rows(60, "retrieve_knowledge", "retrieve_knowledge_base"),
        Forward("list_parsers", 30),
        Forward("invoke_parser", 300),
        # storage: the plugin's names become the host's binary storage
        Forward("set_plugin_storage", 30, host_action="set_binary_storage", owner=Owner.PLUGIN),
        Forward("get_plugin_storage", 30, host_action="get_binary_storage", owner=Owner.PLUGIN),
        Forward(
            "get_plugin_storage_keys",
            30,
            host_action="get_binary_storage_keys",
            owner=Owner.PLUGIN,
        ),
        Forward(
            "delete_plugin_storage", 30, host_action="delete_binary_storage", owner=Owner.PLUGIN
        ),
        Forward(
            "set_workspace_storage", 30, host_action="set_binary_storage", owner=Owner.WORKSPACE
        ),
        Forward(
            "get_workspace_storage", 30, host_action="get_binary_storage", owner=Owner.WORKSPACE
        ),
        Forward(
            "get_workspace_storage_keys",
            30,
            host_action="get_binary_storage_keys",
            owner=Owner.WORKSPACE,
        ),
        Forward(
            "delete_workspace_storage",
            30,
            host_action="delete_binary_storage",
            owner=Owner.WORKSPACE,
        ),
        Forward("get_config_file", 30),
        # agent-run context APIs
        *_rows(30, "get_prompt", "history_page", "history_search", "event_get", "event_page"),
        *_rows(30, "steering_pull", "state_get", "state_set", "state_delete", "state_list"),
        *_rows(30, "run_get", "run_list", "run_events_page", "run_cancel", "run_append_result"),
        *_rows(30, "run_finalize", "run_claim", "run_renew_claim", "run_release_claim"),
        *_rows(30, "runtime_register", "runtime_heartbeat", "runtime_list", "runtime_reconcile"),
        *_rows(30, "runner_list", "run_stats", "runtime_stats", "runner_stats"),
        # Box access for runs
        *_rows(180, "get_box_status", "list_boxes", "acquire_box", "bind_box"),
        *_rows(180, "import_box_attachments", "export_box_files"),
    ]
}
