"""Commands: ``!name args...`` typed by users, answered with one or more replies."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from langbot_plugin.api.definition.components.base import BaseComponent
from langbot_plugin.api.entities._lazy import lazy_names

if TYPE_CHECKING:
    from langbot_plugin.api.entities.builtin.command.context import CommandReturn, ExecuteContext
    from langbot_plugin.api.entities.builtin.command.errors import CommandNotFoundError

__all__ = ["Command", "CommandNotFoundError", "Subcommand"]

__getattr__ = lazy_names(
    __name__,
    {
        "langbot_plugin.api.entities.builtin.command.errors": "CommandNotFoundError",
    },
)

SubcommandFunc = Callable[[Any, Any], AsyncIterator[Any]]


class Subcommand(BaseModel):
    """A registered subcommand: its handler and help texts."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    subcommand: SubcommandFunc
    help: str = ""
    usage: str = ""
    aliases: list[str] = Field(default_factory=list[str])


class Command(BaseComponent):
    """Register handlers with :meth:`subcommand` in ``__init__``.

    Dispatch on the first remaining parameter: a registered name or alias runs that
    handler (the parameter is consumed); otherwise a ``"*"`` handler, if any, runs with
    the parameters untouched; ``""`` handles a bare command. Every reply a handler
    yields is delivered.
    """

    __kind__ = "Command"

    def __init__(self) -> None:
        super().__init__()
        self.registered_subcommands = {}

    @property
    def registered_subcommands(self) -> dict[str, Subcommand]:
        """The registered subcommands by name (``"*"``: the catch-all)."""
        return vars(self).setdefault("_registered_subcommands", {})

    @registered_subcommands.setter
    def registered_subcommands(self, value: dict[str, Subcommand]) -> None:
        vars(self)["_registered_subcommands"] = value

    def subcommand(
        self,
        name: str,
        help: str = "",
        usage: str = "",
        aliases: list[str] | None = None,
    ) -> Callable[[SubcommandFunc], SubcommandFunc]:
        """Decorator: register ``func(self, context)`` (an async generator) under ``name``."""

        def register(func: SubcommandFunc) -> SubcommandFunc:
            self.registered_subcommands[name] = Subcommand(
                subcommand=func, help=help, usage=usage, aliases=list(aliases or [])
            )
            return func

        return register

    def _find(self, name: str) -> Subcommand | None:
        found = self.registered_subcommands.get(name)
        if found is not None:
            return found
        return next(
            (
                s
                for key, s in self.registered_subcommands.items()
                if key != "*" and name in s.aliases
            ),
            None,
        )

    async def _execute(self, context: ExecuteContext) -> AsyncGenerator[CommandReturn]:
        from langbot_plugin.api.entities.builtin.command.context import CommandReturn
        from langbot_plugin.api.entities.builtin.command.errors import CommandNotFoundError

        name = context.crt_params[0] if context.crt_params else ""
        chosen = self._find(name) if name != "*" else None
        if chosen is not None and name:
            context.shift()
        elif chosen is None:
            chosen = self.registered_subcommands.get("*")
        if chosen is None:
            yield CommandReturn(error=CommandNotFoundError(name or context.crt_command))
            return
        async for reply in chosen.subcommand(self, context):
            yield reply
