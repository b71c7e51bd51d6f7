"""0.7 path of the explicit streaming reply (``async with api.reply_stream() as r``)."""

from langbot_plugin.api.proxies.agent_run.replies import AgentRunReplyAPIMixin, ReplyStream

AgentRunReplyStreamAPIMixin = AgentRunReplyAPIMixin

__all__ = ["AgentRunReplyStreamAPIMixin", "ReplyStream"]
