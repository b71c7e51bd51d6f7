"""An AgentRunner with a tool loop over LangBot's sandbox.

LangBot offers runners its Box (a sandbox per conversation) as the host tool
``exec``: a shell command in, its exit code and output out. This runner asks the
run's model with that tool available; each time the model calls it, the runner runs
the command through ``api.call_tool`` (reported as ``tool.call.started`` /
``tool.call.completed``) and hands the result back to the model, until the model
answers in text or ``max_steps`` commands have run.

When the run may use the Box's files (``available_apis.box``), the model also has
``deliver_file``: the runner exports that file of the sandbox with
``api.export_box_files`` (the host reads it from the Box and answers a handle) and
sends every exported file with the answer (``message.completed`` ``file_ids``).
"""

import json
from collections.abc import AsyncGenerator
from typing import Any

from langbot_plugin.api.definition.components.agent_runner.runner import AgentRunner
from langbot_plugin.api.entities.builtin.agent_runner import AgentRunContext, AgentRunResult
from langbot_plugin.api.entities.builtin.agent_runner.errors import AgentAPIException
from langbot_plugin.api.entities.builtin.provider.message import Message
from langbot_plugin.api.entities.builtin.resource.tool import LLMTool

EXEC = "exec"
DELIVER = "deliver_file"
PROMPT = (
    "You answer with the help of a Linux sandbox. Use the exec tool to run shell "
    "commands or python3 whenever a computation or a file is involved."
)
DELIVER_TOOL = LLMTool(
    name=DELIVER,
    human_desc="Send a file of the sandbox to the user",
    description="Send a file you wrote in the sandbox to the user with your answer "
    "(it is moved out of the sandbox).",
    parameters={
        "type": "object",
        "properties": {"path": {"type": "string", "description": "Absolute path in the sandbox."}},
        "required": ["path"],
        "additionalProperties": False,
    },
)


class Coder(AgentRunner):
    async def run(self, ctx: AgentRunContext) -> AsyncGenerator[AgentRunResult]:
        api = self.get_run_api(ctx)
        models = api.get_allowed_models()
        if not models or EXEC not in {t.tool_name for t in api.get_allowed_tools()}:
            yield AgentRunResult.run_failed(
                ctx.run_id, "this run needs a model and the Box's exec tool", "coder.no_box"
            )
            return
        detail = await api.get_tool_detail(EXEC)
        tool = LLMTool(
            name=EXEC,
            human_desc="Run a command in the sandbox",
            description=str(detail.get("description") or ""),
            parameters=dict(detail.get("parameters") or {}),
        )
        can_deliver = ctx.context.available_apis.allows("box")
        tools = [tool, DELIVER_TOOL] if can_deliver else [tool]
        messages = [
            Message(role="system", content=PROMPT),
            Message(role="user", content=ctx.input.to_text()),
        ]
        exported: list[str] = []  # the handles of the files to send with the answer
        for _ in range(int(ctx.config.get("max_steps") or 4) + 1):
            answer = await api.invoke_llm(models[0].model_id, messages, tools)
            messages.append(answer)
            if not answer.tool_calls:
                yield AgentRunResult.message_completed(
                    ctx.run_id, answer, file_ids=exported or None
                )
                yield AgentRunResult.run_completed(ctx.run_id)
                return
            for call in answer.tool_calls:
                name = call.function.name
                arguments: dict[str, Any] = json.loads(call.function.arguments or "{}")
                yield AgentRunResult.tool_call_started(ctx.run_id, call.id, name, arguments)
                if name == DELIVER and can_deliver:
                    try:
                        files = await api.export_box_files([str(arguments.get("path"))])
                    except AgentAPIException as exc:  # refused: the model hears why
                        result: Any = {"error": exc.code, "message": exc.message}
                    else:
                        exported = [f.id for f in files]  # all not delivered yet, this one too
                        result = {"delivered_with_answer": [f.name for f in files]}
                else:
                    result = await api.call_tool(EXEC, arguments)
                yield AgentRunResult.tool_call_completed(ctx.run_id, call.id, name, result)
                messages.append(
                    Message(role="tool", content=json.dumps(result), tool_call_id=call.id)
                )
        yield AgentRunResult.run_failed(
            ctx.run_id, "the model kept running commands without answering", "coder.too_many_steps"
        )
