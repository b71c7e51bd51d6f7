"""Actions the host sends to the plugin runtime on its control connection.

Both dialects are accepted: the released 4.11 host ("0.7": ``list_runners``,
``run_runner``, ``execution_mode``) and the 0.5 names (``list_agent_runners``,
``run_agent``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from langbot_plugin.protocol.containers import ManifestDump, PluginContainer
from langbot_plugin.protocol.spec import ActionSpec, Empty, Params, Result

__all__ = [
    "APPLY_PLUGIN_INSTALLATION",
    "CALL_TOOL",
    "EMIT_EVENT",
    "EXECUTE_COMMAND",
    "GET_DEBUG_INFO",
    "GET_PLUGIN_INFO",
    "GET_PLUGIN_LOGS",
    "LIST_COMMANDS",
    "LIST_PLUGINS",
    "LIST_RUNNERS",
    "LIST_TOOLS",
    "RECONCILE_PLUGIN_INSTALLATIONS",
    "REMOVE_PLUGIN_INSTALLATION",
    "RUN_RUNNER",
    "SET_RUNTIME_CONFIG",
    "ApplyInstallationParams",
    "ApplyInstallationResult",
    "DebugInfo",
    "DesiredInstallation",
    "HostCallToolParams",
    "HostEmitEventParams",
    "HostEmitEventResult",
    "HostExecuteCommandParams",
    "HostRunRunnerParams",
    "PluginLogsParams",
    "PluginRef",
    "ReconcileParams",
    "ReconcileResult",
    "RuntimeConfig",
    "ScopedListParams",
]

ExecutionMode = Literal["dedicated", "shared-runtime-v1"]


class RuntimeConfig(Params):
    runtime_identity: dict[str, Any] = Field(default_factory=dict[str, Any])
    worker_policy: dict[str, Any] = Field(default_factory=dict[str, Any])
    runtime_profile: str = "oss_dev"
    cloud_service_url: str | None = None


class ScopedListParams(Params):
    include_plugins: list[str] | None = None


class PluginRef(Params):
    """Names a plugin; the host uses both spellings depending on the action."""

    author: str | None = None
    plugin_author: str | None = None
    plugin_name: str

    @property
    def plugin_identity(self) -> str:
        return f"{self.plugin_author or self.author}/{self.plugin_name}"


class PluginLogsParams(PluginRef):
    limit: int = 200
    level: str | None = None


class PluginsResult(Result):
    plugins: list[PluginContainer] = Field(default_factory=list[PluginContainer])


class PluginInfoResult(Result):
    plugin: PluginContainer | None = None


class DesiredInstallation(Params):
    binding: dict[str, Any]
    enabled: bool = True
    execution_mode: ExecutionMode = "dedicated"


class ReconcileParams(Params):
    installations: list[DesiredInstallation] = Field(default_factory=list[DesiredInstallation])


class FailedInstallation(Result):
    installation_uuid: str
    error_code: str
    message: str


class ReconcileResult(Result):
    applied: list[str] = Field(default_factory=list[str])
    removed: list[str] = Field(default_factory=list[str])
    missing_artifacts: list[str] = Field(default_factory=list[str])
    failed_installations: list[FailedInstallation] = Field(default_factory=list[FailedInstallation])


class ApplyInstallationParams(Params):
    enabled: bool = True
    execution_mode: ExecutionMode = "dedicated"
    artifact_file_key: str | None = None


class ApplyInstallationResult(Result):
    installation_uuid: str
    state: str
    error_code: str | None = None
    message: str | None = None


class DebugInfo(Result):
    plugin_debug_key: str
    expires_at: str
    ws_debug_port: int


class RunnersResult(Result):
    runners: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])


class CommandsResult(Result):
    commands: list[ManifestDump] = Field(default_factory=list[ManifestDump])


class ToolsResult(Result):
    tools: list[ManifestDump] = Field(default_factory=list[ManifestDump])


class HostRunRunnerParams(Params):
    plugin_author: str
    plugin_name: str
    runner_name: str
    context: dict[str, Any]


class HostExecuteCommandParams(ScopedListParams):
    command_context: dict[str, Any]


class HostCallToolParams(ScopedListParams):
    tool_name: str
    tool_parameters: dict[str, Any] = Field(default_factory=dict[str, Any])
    session: dict[str, Any] | None = None
    query_id: int | None = None
    query_uuid: str | None = None


class ToolResponse(Result):
    tool_response: Any = None


class HostEmitEventParams(ScopedListParams):
    event_context: dict[str, Any]


class HostEmitEventResult(Result):
    emitted_plugins: list[PluginContainer] = Field(default_factory=list[PluginContainer])
    response_sources: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])
    event_context: dict[str, Any]


SET_RUNTIME_CONFIG = ActionSpec(
    "set_runtime_config", RuntimeConfig, Empty, doc="handshake: must come first"
)
LIST_PLUGINS = ActionSpec("list_plugins", ScopedListParams, PluginsResult)
GET_PLUGIN_INFO = ActionSpec("get_plugin_info", PluginRef, PluginInfoResult)
RECONCILE_PLUGIN_INSTALLATIONS = ActionSpec(
    "reconcile_plugin_installations", ReconcileParams, ReconcileResult
)
APPLY_PLUGIN_INSTALLATION = ActionSpec(
    "apply_plugin_installation", ApplyInstallationParams, ApplyInstallationResult
)
REMOVE_PLUGIN_INSTALLATION = ActionSpec("remove_plugin_installation", Empty, Result)
GET_DEBUG_INFO = ActionSpec("get_debug_info", Empty, DebugInfo)
LIST_RUNNERS = ActionSpec(
    "list_runners", ScopedListParams, RunnersResult, aliases=("list_agent_runners",)
)
RUN_RUNNER = ActionSpec(
    "run_runner", HostRunRunnerParams, Result, stream=True, aliases=("run_agent",)
)
LIST_COMMANDS = ActionSpec("list_commands", ScopedListParams, CommandsResult)
EXECUTE_COMMAND = ActionSpec("execute_command", HostExecuteCommandParams, Result, stream=True)
LIST_TOOLS = ActionSpec("list_tools", ScopedListParams, ToolsResult)
CALL_TOOL = ActionSpec("call_tool", HostCallToolParams, ToolResponse)
EMIT_EVENT = ActionSpec("emit_event", HostEmitEventParams, HostEmitEventResult)
GET_PLUGIN_LOGS = ActionSpec("get_plugin_logs", PluginLogsParams, Result)
