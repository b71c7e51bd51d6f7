"""0.7 path for run statistics (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``stats`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner import stats as _same
from langbot_plugin.api.entities.builtin.agent_runner.compat import HOST_RESPONSE_MODEL_CONFIG
from langbot_plugin.api.entities.builtin.agent_runner.stats import *  # noqa: F403

__all__ = ["HOST_RESPONSE_MODEL_CONFIG"]
__all__ += _same.__all__
