from __future__ import annotations

from collections.abc import AsyncGenerator

from langbot_plugin.api.definition.components.command.command import Command
from langbot_plugin.api.entities.builtin.command.context import CommandReturn, ExecuteContext


class Mood(Command):
    """Named subcommands only, registered in initialize: no '*' handler, as many public
    plugins write them."""

    async def initialize(self) -> None:
        await super().initialize()

        @self.subcommand("show", help="show the mood", usage="!mood show")
        async def show(self: Mood, context: ExecuteContext) -> AsyncGenerator[CommandReturn]:
            yield CommandReturn(text="happy")

        @self.subcommand("set", help="set the mood", usage="!mood set <mood>")
        async def set_(self: Mood, context: ExecuteContext) -> AsyncGenerator[CommandReturn]:
            yield CommandReturn(text=f"mood is now {' '.join(context.crt_params)}")
