from collections.abc import AsyncGenerator

from langbot_plugin.api.definition.components.command.command import Command
from langbot_plugin.api.entities.builtin.command.context import CommandReturn, ExecuteContext
from langbot_plugin.api.entities.builtin.provider.message import Message


class Ask(Command):
    def __init__(self) -> None:
        super().__init__()

        @self.subcommand("*", help="ask the first LLM", usage="!ask <question>")
        async def ask(
            self: Command, context: ExecuteContext
        ) -> AsyncGenerator[CommandReturn, None]:
            question = " ".join(context.crt_params)
            models = await self.plugin.get_llm_models()
            if not models:
                yield CommandReturn(text="no LLM model is configured")
                return
            reply = await self.plugin.invoke_llm(
                models[0], [Message(role="user", content=question)]
            )
            yield CommandReturn(text=f"LLM said: {reply.content}")
