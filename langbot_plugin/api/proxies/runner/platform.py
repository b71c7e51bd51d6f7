"""0.7 path of the run's platform calls (``call_platform_api``, ``send_message``,
``reply_message``; see :mod:`langbot_plugin.api.proxies.agent_run.replies`)."""

from langbot_plugin.api.entities.builtin.platform.message import MessageChain
from langbot_plugin.api.proxies.agent_run.replies import AgentRunReplyAPIMixin

RunnerPlatformAPIMixin = AgentRunReplyAPIMixin

__all__ = ["MessageChain", "RunnerPlatformAPIMixin"]
