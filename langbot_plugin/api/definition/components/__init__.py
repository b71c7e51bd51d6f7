"""Component kinds a plugin can offer."""

from langbot_plugin.api.definition.components.agent_runner.runner import AgentRunner
from langbot_plugin.api.definition.components.base import BaseComponent, NoneComponent
from langbot_plugin.api.definition.components.command.command import Command, Subcommand
from langbot_plugin.api.definition.components.common.event_listener import EventListener
from langbot_plugin.api.definition.components.knowledge_engine.engine import KnowledgeEngine
from langbot_plugin.api.definition.components.page import Page
from langbot_plugin.api.definition.components.parser.parser import Parser
from langbot_plugin.api.definition.components.runner.runner import Runner
from langbot_plugin.api.definition.components.tool.tool import Tool

__all__ = [
    "AgentRunner",
    "BaseComponent",
    "Command",
    "EventListener",
    "KnowledgeEngine",
    "NoneComponent",
    "Page",
    "Parser",
    "Runner",
    "Subcommand",
    "Tool",
]
