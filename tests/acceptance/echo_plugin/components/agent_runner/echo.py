from collections.abc import AsyncGenerator

from langbot_plugin.api.definition.components.agent_runner.runner import AgentRunner
from langbot_plugin.api.entities.builtin.agent_runner import AgentRunContext, AgentRunResult
from langbot_plugin.api.entities.builtin.provider.message import Message


class EchoRunner(AgentRunner):
    async def run(self, ctx: AgentRunContext) -> AsyncGenerator[AgentRunResult, None]:
        text = f"echo-runner: {ctx.input.to_text()}"
        yield AgentRunResult.run_completed(ctx.run_id, Message(role="assistant", content=text))
