from collections.abc import AsyncGenerator
from datetime import UTC, datetime

from langbot_plugin.api.definition.components.command.command import Command
from langbot_plugin.api.entities.builtin.command.context import CommandReturn, ExecuteContext


class TimeCommand(Command):
    def __init__(self) -> None:
        super().__init__()

        @self.subcommand("", help="the current UTC time")
        async def now(
            self: Command, context: ExecuteContext
        ) -> AsyncGenerator[CommandReturn, None]:
            yield CommandReturn(text=datetime.now(UTC).strftime("It is %H:%M:%S UTC."))
