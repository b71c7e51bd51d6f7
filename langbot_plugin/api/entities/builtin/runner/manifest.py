"""0.7 path for what a runner declares about itself (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``manifest`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner.manifest import (
    AgentRunnerCapabilities,
    AgentRunnerManifest,
    AgentRunnerPermissions,
    DynamicFormItemSchema,
    I18nObject,
    RunnerManifest,
)

RunnerCapabilities = AgentRunnerCapabilities
RunnerPermissions = AgentRunnerPermissions

__all__ = [
    "AgentRunnerCapabilities",
    "AgentRunnerManifest",
    "AgentRunnerPermissions",
    "DynamicFormItemSchema",
    "I18nObject",
    "RunnerCapabilities",
    "RunnerManifest",
    "RunnerPermissions",
]
