"""Actions between the plugin runtime and a plugin process (worker or ``lbp run``).

Runtime -> plugin: initialize, describe, and call into components (the calls into
files, pages, knowledge engines and parsers are in :mod:`.plugin_components`).
Plugin -> runtime: ``register_plugin``; everything else a plugin sends is forwarded to
the host (see :mod:`langbot_plugin.protocol.host_link`).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from langbot_plugin.protocol.containers import PluginContainer, PluginSettings
from langbot_plugin.protocol.runners import RunResultItem
from langbot_plugin.protocol.spec import ActionSpec, Direction, Empty, Params, Result, to_plugin

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
    "CommandReply",
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


class CommandReply(Result):
    """One item of a command's answer: a ``CommandReturn`` dump."""

    command_response: dict[str, Any]


REGISTER_PLUGIN = ActionSpec(
    "register_plugin",
    RegisterPluginParams,
    Empty,
    direction=Direction.PLUGIN_TO_RUNTIME,
    timeout=150,
    doc="announce the plugin (a debug plugin presents its key); answered once it is initialized",
)
INITIALIZE_PLUGIN = to_plugin(
    "initialize_plugin",
    InitializePluginParams,
    Empty,
    timeout=120,
    doc="instantiate the plugin and its components with these settings",
)
GET_PLUGIN_CONTAINER = to_plugin(
    "get_plugin_container",
    Empty,
    PluginContainer,
    timeout=30,
    doc="describe the plugin and its components",
)
RUN_RUNNER = to_plugin(
    "run_runner",
    RunRunnerParams,
    RunResultItem,
    stream=True,
    aliases=("run_agent",),
    timeout=300,
    doc="run an AgentRunner; items are AgentRunResult dumps (timeout: idle limit per item)",
)
EXECUTE_COMMAND = to_plugin(
    "execute_command",
    ExecuteCommandParams,
    CommandReply,
    stream=True,
    timeout=180,
    doc="run a command",
)
CALL_TOOL = to_plugin(
    "call_tool",
    CallToolParams,
    CallToolResult,
    timeout=180,
    doc="call a Tool component",
)
EMIT_EVENT = to_plugin(
    "emit_event",
    EmitEventParams,
    EmitEventResult,
    timeout=180,
    doc="deliver an event to the EventListeners",
)
SHUTDOWN = to_plugin(
    "shutdown",
    Empty,
    Empty,
    timeout=5,
    doc="the runtime is stopping this plugin",
)
