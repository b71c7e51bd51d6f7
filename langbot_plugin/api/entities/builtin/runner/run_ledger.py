"""0.7 path for run records (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``run_ledger`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner import run_ledger as _same
from langbot_plugin.api.entities.builtin.agent_runner.compat import HOST_RESPONSE_MODEL_CONFIG
from langbot_plugin.api.entities.builtin.agent_runner.run_ledger import *  # noqa: F403

__all__ = ["HOST_RESPONSE_MODEL_CONFIG"]
__all__ += _same.__all__
