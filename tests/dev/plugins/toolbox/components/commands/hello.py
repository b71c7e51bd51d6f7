from collections.abc import AsyncGenerator

from langbot_plugin.api.definition.components.command.command import Command
from langbot_plugin.api.entities.builtin.command.context import CommandReturn, ExecuteContext


class Hello(Command):
    def __init__(self) -> None:
        super().__init__()

        @self.subcommand("*", help="greet someone")
        async def greet(self: Command, context: ExecuteContext) -> AsyncGenerator[CommandReturn]:
            yield CommandReturn(text=f"hello, {' '.join(context.crt_params)}!")
