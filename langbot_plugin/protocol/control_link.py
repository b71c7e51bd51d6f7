"""Actions the host sends to the plugin runtime on its control connection.

Both dialects are accepted: the released 4.11 host ("0.7": ``list_runners``,
``run_runner``, ``execution_mode``) and the 0.5 names (``list_agent_runners``,
``run_agent``).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from langbot_plugin.protocol.containers import ManifestDump, PluginContainer
from langbot_plugin.protocol.handshake import ExecutionMode, RuntimeConfig
from langbot_plugin.protocol.plugin_link import (
    CallToolParams,
    CallToolResult,
    EmitEventParams,
    ExecuteCommandParams,
)
from langbot_plugin.protocol.runners import RunResultItem
from langbot_plugin.protocol.spec import Empty, Params, Result, from_host

__all__ = [
    "APPLY_PLUGIN_INSTALLATION",
    "CALL_TOOL",
    "CONTROL_ACTIONS",
    "DELETE_PLUGIN",
    "EMIT_EVENT",
    "EXECUTE_COMMAND",
    "GET_DEBUG_INFO",
    "GET_PLUGIN_INFO",
    "GET_PLUGIN_LOGS",
    "INSTALL_PLUGIN",
    "LIST_COMMANDS",
    "LIST_PLUGINS",
    "LIST_RUNNERS",
    "LIST_TOOLS",
    "RECONCILE_PLUGIN_INSTALLATIONS",
    "REMOVE_PLUGIN_INSTALLATION",
    "RESTART_PLUGIN",
    "RUN_RUNNER",
    "SET_RUNTIME_CONFIG",
    "UPGRADE_PLUGIN",
    "ApplyInstallationParams",
    "ApplyInstallationResult",
    "CommandReturnItem",
    "CommandsResult",
    "DebugInfo",
    "DesiredInstallation",
    "ExecutionMode",
    "FailedInstallation",
    "HostCallToolParams",
    "HostEmitEventParams",
    "HostEmitEventResult",
    "HostExecuteCommandParams",
    "HostRunRunnerParams",
    "InstallParams",
    "LifecycleRef",
    "ListenerFailure",
    "PluginInfoResult",
    "PluginLogs",
    "PluginLogsParams",
    "PluginRef",
    "PluginsResult",
    "Progress",
    "ReconcileParams",
    "ReconcileResult",
    "RunnersResult",
    "RuntimeConfig",
    "ScopedListParams",
    "ToolsResult",
]


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
    """The lenient parse of a :class:`~.handshake.PluginInstallationDesiredState` (its
    ``binding`` is read as an :class:`~.scope.ActionScope`, naming a bad field's path)."""

    binding: dict[str, Any]
    enabled: bool = True
    execution_mode: ExecutionMode = "dedicated"


class ReconcileParams(Params):
    """The lenient parse of a :class:`~.handshake.ReconcilePluginInstallationsRequest`."""

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
    """The lenient parse of an :class:`~.handshake.ApplyPluginInstallationRequest`."""

    enabled: bool = True
    execution_mode: ExecutionMode = "dedicated"
    artifact_file_key: str | None = None


class ApplyInstallationResult(Result):
    installation_uuid: str
    state: str
    error_code: str | None = None
    message: str | None = None
    #: the refusal's details (``package_signature_refused``: ``status``, ``plugin``...)
    details: dict[str, Any] | None = None


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


# The host's forms of the plugin's calls: the same fields, after ``include_plugins``.
class HostExecuteCommandParams(ExecuteCommandParams, ScopedListParams):
    pass


class HostCallToolParams(CallToolParams, ScopedListParams):
    pass


class HostEmitEventParams(EmitEventParams, ScopedListParams):
    pass


class ListenerFailure(Result):
    """A plugin whose listener raised; the event went on to the next plugin."""

    plugin: str
    code: str
    error: str
    details: dict[str, Any] = Field(default_factory=dict[str, Any])


class HostEmitEventResult(Result):
    emitted_plugins: list[PluginContainer] = Field(default_factory=list[PluginContainer])
    response_sources: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])
    event_context: dict[str, Any]
    #: Ours (the released host reads only the keys above): listeners that raised.
    failures: list[ListenerFailure] = Field(default_factory=list[ListenerFailure])


class CommandReturnItem(Result):
    """A host-safe ``CommandReturn``: the released host crashes on a non-null ``error``,
    so the runtime folds an error into ``text``."""

    text: str | None = None
    image_base64: str | None = None
    image_url: str | None = None
    file_url: str | None = None
    file_name: str | None = None
    error: None = None


class PluginLogs(Result):
    logs: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])


class LifecycleRef(Params):
    plugin_author: str | None = None
    plugin_name: str | None = None


class InstallParams(Params):
    install_source: str = ""
    install_info: dict[str, Any] = Field(default_factory=dict[str, Any])


class Progress(Result):
    current_action: str


SET_RUNTIME_CONFIG = from_host(
    "set_runtime_config",
    RuntimeConfig,
    Empty,
    timeout=10,
    parse=RuntimeConfig.from_peer,
    doc="the handshake: must come first on a connection",
)
LIST_PLUGINS = from_host("list_plugins", ScopedListParams, PluginsResult)
GET_PLUGIN_INFO = from_host("get_plugin_info", PluginRef, PluginInfoResult)
RECONCILE_PLUGIN_INSTALLATIONS = from_host(
    "reconcile_plugin_installations",
    ReconcileParams,
    ReconcileResult,
    timeout=300,
    doc="make the running installations the desired ones",
)
APPLY_PLUGIN_INSTALLATION = from_host(
    "apply_plugin_installation",
    ApplyInstallationParams,
    ApplyInstallationResult,
    timeout=900,
    request_files=("artifact_file_key",),
    doc="install (the package pushed first) or re-apply the context's installation",
)
REMOVE_PLUGIN_INSTALLATION = from_host("remove_plugin_installation", Empty, Empty, timeout=60)
GET_DEBUG_INFO = from_host("get_debug_info", Empty, DebugInfo, timeout=10)
LIST_RUNNERS = from_host(
    "list_runners",
    ScopedListParams,
    RunnersResult,
    aliases=("list_agent_runners",),
)
RUN_RUNNER = from_host(
    "run_runner",
    HostRunRunnerParams,
    RunResultItem,
    stream=True,
    aliases=("run_agent",),
    timeout=300,
    doc="run an agent runner; failures the plugin cannot report become run.failed",
)
LIST_COMMANDS = from_host("list_commands", ScopedListParams, CommandsResult)
EXECUTE_COMMAND = from_host(
    "execute_command",
    HostExecuteCommandParams,
    CommandReturnItem,
    stream=True,
    timeout=180,
)
LIST_TOOLS = from_host("list_tools", ScopedListParams, ToolsResult)
CALL_TOOL = from_host("call_tool", HostCallToolParams, CallToolResult, timeout=180)
EMIT_EVENT = from_host("emit_event", HostEmitEventParams, HostEmitEventResult, timeout=180)
GET_PLUGIN_LOGS = from_host("get_plugin_logs", PluginLogsParams, PluginLogs)

# The lifecycle actions of older hosts (the 4.11 host still sends delete and restart
# for debug plugins); each streams {"current_action": ...} progress.
DELETE_PLUGIN = from_host("delete_plugin", LifecycleRef, Progress, stream=True, timeout=120)
RESTART_PLUGIN = from_host("restart_plugin", LifecycleRef, Progress, stream=True, timeout=120)
INSTALL_PLUGIN = from_host(
    "install_plugin",
    InstallParams,
    Progress,
    stream=True,
    timeout=900,
    request_files=("install_info.plugin_file_key",),
)
UPGRADE_PLUGIN = from_host("upgrade_plugin", Params, Progress, stream=True, doc="not supported")

#: Every action of the control connection except the component calls and listings.
CONTROL_ACTIONS = (
    SET_RUNTIME_CONFIG,
    LIST_PLUGINS,
    GET_PLUGIN_INFO,
    RECONCILE_PLUGIN_INSTALLATIONS,
    APPLY_PLUGIN_INSTALLATION,
    REMOVE_PLUGIN_INSTALLATION,
    GET_DEBUG_INFO,
    LIST_RUNNERS,
    RUN_RUNNER,
    LIST_COMMANDS,
    EXECUTE_COMMAND,
    LIST_TOOLS,
    CALL_TOOL,
    EMIT_EVENT,
    GET_PLUGIN_LOGS,
    DELETE_PLUGIN,
    RESTART_PLUGIN,
    INSTALL_PLUGIN,
    UPGRADE_PLUGIN,
)
