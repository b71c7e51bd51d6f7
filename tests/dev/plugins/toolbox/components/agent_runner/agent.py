"""Streams the configured model; runs each tool call it asks for, then asks again."""

import json
from collections.abc import AsyncGenerator

from langbot_plugin.api.definition.components.agent_runner.runner import AgentRunner
from langbot_plugin.api.entities.builtin.agent_runner import AgentRunContext, AgentRunResult
from langbot_plugin.api.entities.builtin.agent_runner.streaming import CumulativeText
from langbot_plugin.api.entities.builtin.provider.message import Message
from langbot_plugin.api.entities.builtin.resource.tool import LLMTool


class Agent(AgentRunner):
    async def run(self, ctx: AgentRunContext) -> AsyncGenerator[AgentRunResult]:
        api = self.get_run_api(ctx)
        model = str(ctx.config.get("model") or "")
        funcs = []
        for granted in api.get_allowed_tools():
            detail = await api.get_tool_detail(granted.tool_name)
            funcs.append(
                LLMTool(
                    name=detail.get("name", granted.tool_name),
                    human_desc=detail.get("description", ""),
                    description=detail.get("description", ""),
                    parameters=detail.get("parameters", {}),
                )
            )
        messages = [Message(role="user", content=ctx.input.to_text())]
        text = CumulativeText()
        for _ in range(4):
            text = CumulativeText()
            calls = None
            async for chunk in api.invoke_llm_stream(model, messages, funcs=funcs):
                if chunk.tool_calls:
                    calls = chunk.tool_calls
                if chunk.content:
                    yield AgentRunResult.message_delta(ctx.run_id, text.chunk(chunk))
            if not calls:
                break
            messages.append(Message(role="assistant", content="", tool_calls=calls))
            for call in calls:
                arguments = json.loads(call.function.arguments or "{}")
                yield AgentRunResult.tool_call_started(
                    ctx.run_id, call.id, call.function.name, arguments
                )
                result = await api.call_tool(call.function.name, arguments)
                yield AgentRunResult.tool_call_completed(
                    ctx.run_id, call.id, call.function.name, result
                )
                messages.append(
                    Message(role="tool", content=json.dumps(result), tool_call_id=call.id)
                )
        turns = int(ctx.state.conversation.get("turns") or 0) + 1
        yield AgentRunResult.state_updated(ctx.run_id, "turns", turns, "conversation")
        greeting = str(ctx.config.get("greeting") or "")
        final = text.message()
        if greeting:
            final = Message(role="assistant", content=greeting + str(final.content or ""))
        yield AgentRunResult.run_completed(ctx.run_id, final)
