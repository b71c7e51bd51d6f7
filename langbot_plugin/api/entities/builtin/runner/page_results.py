"""0.7 path for pages of history and events (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``page_results`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner import page_results as _same
from langbot_plugin.api.entities.builtin.agent_runner.compat import HOST_RESPONSE_MODEL_CONFIG
from langbot_plugin.api.entities.builtin.agent_runner.page_results import *  # noqa: F403
from langbot_plugin.api.entities.builtin.agent_runner.transcript import TranscriptItem

__all__ = ["HOST_RESPONSE_MODEL_CONFIG", "TranscriptItem"]
__all__ += _same.__all__
