"""0.7 path for the input of a run (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``input`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner.input import AgentInput, InputAttachment
from langbot_plugin.api.entities.builtin.agent_runner.interaction import InteractionSubmission
from langbot_plugin.api.entities.builtin.provider.message import ContentElement

__all__ = ["AgentInput", "ContentElement", "InputAttachment", "InteractionSubmission"]
