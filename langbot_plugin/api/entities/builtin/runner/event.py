"""0.7 path for the event that triggered a run (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``event`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner import event as _same
from langbot_plugin.api.entities.builtin.agent_runner.event import *  # noqa: F403

__all__: list[str] = []
__all__ += _same.__all__
