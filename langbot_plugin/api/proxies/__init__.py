"""Proxies through which plugins call the host: plugin-level, query-level and
run-level (``agent_run``). They talk through a :class:`~.channel.Channel`."""

from langbot_plugin.api.proxies.agent_run import AgentRunAdminAPIProxy, AgentRunAPIProxy
from langbot_plugin.api.proxies.langbot_api import LangBotAPIProxy

__all__ = ["AgentRunAPIProxy", "AgentRunAdminAPIProxy", "LangBotAPIProxy"]
