"""0.7 path for context inlined into a run and the context-API grants (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``context_access`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner.context_access import (
    ContextAccess,
    ContextAPICapabilities,
    InlineContextMode,
    InlineContextPolicy,
)

__all__ = ["ContextAPICapabilities", "ContextAccess", "InlineContextMode", "InlineContextPolicy"]
