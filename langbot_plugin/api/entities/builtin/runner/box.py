"""0.7 path for Box answers and requests (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``box`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner import box as _same
from langbot_plugin.api.entities.builtin.agent_runner.box import *  # noqa: F403

__all__: list[str] = []
__all__ += _same.__all__
