"""Actions between the plugin runtime and a plugin process (worker or ``lbp run``).

Runtime -> plugin: initialize, describe, and call into components. Plugin -> runtime:
``register_plugin``; everything else a plugin sends is forwarded to the host (see
:mod:`langbot_plugin.protocol.host_link`).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from langbot_plugin.protocol.containers import PluginContainer, PluginSettings
from langbot_plugin.protocol.spec import ActionSpec, Empty, Params, Result

__all__ = [
    "CALL_TOOL",
    "EMIT_EVENT",
    "EXECUTE_COMMAND",
    "GET_PLUGIN_CONTAINER",
    "INITIALIZE_PLUGIN",
    "REGISTER_PLUGIN",
    "RUN_RUNNER",
    "SHUTDOWN",
    "CallToolParams",
    "CallToolResult",
    "EmitEventParams",
    "EmitEventResult",
    "ExecuteCommandParams",
    "InitializePluginParams",
    "RegisterPluginParams",
    "RunRunnerParams",
]


class RegisterPluginParams(Params):
    plugin_container: PluginContainer
    prod_mode: bool = False
    plugin_debug_key: str = ""
    registration_capability: str = ""


class InitializePluginParams(Params):
    plugin_settings: PluginSettings = Field(default_factory=PluginSettings)


class RunRunnerParams(Params):
    runner_name: str
    context: dict[str, Any]


class ExecuteCommandParams(Params):
    command_context: dict[str, Any]


class CallToolParams(Params):
    tool_name: str
    tool_parameters: dict[str, Any] = Field(default_factory=dict[str, Any])
    session: dict[str, Any] | None = None
    query_id: int | None = None
    query_uuid: str | None = None


class CallToolResult(Result):
    tool_response: Any = None


class EmitEventParams(Params):
    event_context: dict[str, Any]


class EmitEventResult(Result):
    emitted: bool = False
    event_context: dict[str, Any]


REGISTER_PLUGIN = ActionSpec(
    "register_plugin", RegisterPluginParams, Empty, doc="plugin -> runtime: announce itself"
)
INITIALIZE_PLUGIN = ActionSpec(
    "initialize_plugin", InitializePluginParams, Empty, doc="instantiate plugin and components"
)
GET_PLUGIN_CONTAINER = ActionSpec(
    "get_plugin_container", Empty, PluginContainer, doc="describe the plugin and components"
)
RUN_RUNNER = ActionSpec(
    "run_runner",
    RunRunnerParams,
    Result,
    stream=True,
    aliases=("run_agent",),
    doc="run an AgentRunner; items are AgentRunResult dumps",
)
EXECUTE_COMMAND = ActionSpec(
    "execute_command",
    ExecuteCommandParams,
    Result,
    stream=True,
    doc="run a command; items are {command_response: CommandReturn}",
)
CALL_TOOL = ActionSpec("call_tool", CallToolParams, CallToolResult, doc="call a Tool component")
EMIT_EVENT = ActionSpec(
    "emit_event", EmitEventParams, EmitEventResult, doc="deliver an event to EventListeners"
)
SHUTDOWN = ActionSpec("shutdown", Empty, Empty, doc="the runtime is stopping this plugin")
