"""0.7 path for transcript items (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``transcript`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner.compat import HOST_RESPONSE_MODEL_CONFIG
from langbot_plugin.api.entities.builtin.agent_runner.transcript import TranscriptItem

__all__ = ["HOST_RESPONSE_MODEL_CONFIG", "TranscriptItem"]
