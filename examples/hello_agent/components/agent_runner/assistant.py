"""A streaming assistant: the smallest useful AgentRunner.

It asks the first model the run was granted, streams the answer as cumulative
``message.delta`` results (what LangBot expects: each delta carries the whole text so
far), and ends with one ``run.completed`` carrying the final message.
"""

from collections.abc import AsyncGenerator

from langbot_plugin.api.definition.components.agent_runner.runner import AgentRunner
from langbot_plugin.api.entities.builtin.agent_runner import AgentRunContext, AgentRunResult
from langbot_plugin.api.entities.builtin.agent_runner.streaming import CumulativeText
from langbot_plugin.api.entities.builtin.provider.message import Message


class Assistant(AgentRunner):
    async def run(self, ctx: AgentRunContext) -> AsyncGenerator[AgentRunResult, None]:
        api = self.get_run_api(ctx)
        models = api.get_allowed_models()
        if not models:
            yield AgentRunResult.run_failed(
                ctx.run_id, "no model was granted to this run", "demo.no_model"
            )
            return
        prompt = str(ctx.config.get("system-prompt") or "You are a friendly assistant.")
        messages = [
            Message(role="system", content=prompt),
            Message(role="user", content=ctx.input.to_text()),
        ]
        text = CumulativeText()
        async for chunk in api.invoke_llm_stream(models[0].model_id, messages):
            yield AgentRunResult.message_delta(ctx.run_id, text.chunk(chunk))
        yield AgentRunResult.run_completed(ctx.run_id, text.message())
