"""0.7 path for structured interactions (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``interaction`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner import interaction as _same
from langbot_plugin.api.entities.builtin.agent_runner.interaction import *  # noqa: F403

__all__: list[str] = []
__all__ += _same.__all__
