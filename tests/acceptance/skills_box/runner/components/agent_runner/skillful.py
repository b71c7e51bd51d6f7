"""A runner as the released host expects one that uses skills in the Box.

The host's sandbox tools (``exec`` and the others) work only for a run that bound a
Box (``acquire_box`` then ``bind_box``; 4.11.2 ``pkg/box/runner.py``). This runner
binds the conversation's Box (one reuse key for every run, so one Box session), then
hands the model every granted tool (``activate``, ``exec``, ...) plus ``export`` (the
run API's ``export_box_files``: files of the Box handed to the host) and calls what the
model calls, until it answers in text. A refused call is the tool's result, so the
model (and the acceptance check) sees why.
"""

import json
from collections.abc import AsyncGenerator
from typing import Any

from langbot_plugin.api.definition.components.agent_runner.runner import AgentRunner
from langbot_plugin.api.entities.builtin.agent_runner import AgentRunContext, AgentRunResult
from langbot_plugin.api.entities.builtin.agent_runner.errors import AgentAPIException
from langbot_plugin.api.entities.builtin.provider.message import Message
from langbot_plugin.api.entities.builtin.resource.tool import LLMTool

REUSE_KEY = "acceptance-conversation"
MAX_STEPS = 8
EXPORT_TOOL = LLMTool(
    name="export",
    human_desc="export",
    description="Hand files of the Box to the host",
    parameters={
        "type": "object",
        "properties": {"paths": {"type": "array", "items": {"type": "string"}}},
        "required": ["paths"],
    },
)


class Skillful(AgentRunner):
    async def run(self, ctx: AgentRunContext) -> AsyncGenerator[AgentRunResult]:
        api = self.get_run_api(ctx)
        models = api.get_allowed_models()
        if not models:
            yield AgentRunResult.run_failed(ctx.run_id, "no model granted", "skillful.no_model")
            return
        box = await api.acquire_box(REUSE_KEY)
        await api.bind_box(box.id)
        tools = [
            LLMTool(
                name=tool.tool_name,
                human_desc=tool.tool_name,
                description=tool.description or tool.tool_name,
                parameters=tool.parameters or {"type": "object", "properties": {}},
            )
            for tool in api.get_allowed_tools()
        ]
        tools.append(EXPORT_TOOL)
        messages = [Message(role="user", content=ctx.input.to_text())]
        for _ in range(MAX_STEPS):
            answer = await api.invoke_llm(models[0].model_id, messages, tools)
            messages.append(answer)
            if not answer.tool_calls:
                yield AgentRunResult.message_completed(ctx.run_id, answer)
                yield AgentRunResult.run_completed(ctx.run_id)
                return
            for call in answer.tool_calls:
                name = call.function.name
                arguments: dict[str, Any] = json.loads(call.function.arguments or "{}")
                try:
                    if name == EXPORT_TOOL.name:
                        files = await api.export_box_files(arguments["paths"])
                        result: Any = {"exported": [[f.name, f.size] for f in files]}
                    else:
                        result = await api.call_tool(name, arguments)
                except AgentAPIException as exc:
                    result = {"error": exc.code, "message": exc.message}
                messages.append(
                    Message(role="tool", content=json.dumps(result), tool_call_id=call.id)
                )
        yield AgentRunResult.run_failed(ctx.run_id, "too many tool calls", "skillful.steps")
