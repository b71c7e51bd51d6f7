"""0.7 path for context inlined into a run and the context-API grants (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``context_access`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner import context_access as _same
from langbot_plugin.api.entities.builtin.agent_runner.context_access import *  # noqa: F403

__all__: list[str] = []
__all__ += _same.__all__
