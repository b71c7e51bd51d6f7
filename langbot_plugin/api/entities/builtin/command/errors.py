"""Errors a command reports to the user.

Unlike the reference, these are real exceptions (a command handler may ``raise``
them), while keeping the reference surface: ``CommandError(message)``, ``.message``,
``str()`` and ``model_dump()``. In a :class:`~.context.CommandReturn` an error travels
as its message string. They are the ``CommandError`` branch of the plugin API's one
tree (drawn with its codes in :mod:`langbot_plugin.api.errors` and ``docs/errors.md``).
"""

from __future__ import annotations

from typing import Any, Self

from langbot_plugin.rpc.errors import RPCError

__all__ = [
    "CommandError",
    "CommandNotFoundError",
    "CommandOperationError",
    "CommandPrivilegeError",
    "ParamNotEnoughError",
]


class CommandError(RPCError):
    """A command failed; ``message`` is shown to the user."""

    code = "command_error"
    #: Prepended to the message by the subclasses.
    prefix: str = ""
    #: What the user is shown (the prefix included).
    message: str = ""

    def __init__(self, message: str = "", *, details: dict[str, Any] | None = None) -> None:
        super().__init__(self.prefix + message, details=details)

    @classmethod
    def from_wire(
        cls, message: str, *, code: str, details: dict[str, Any] | None, retryable: bool
    ) -> Self:
        return cls(message.removeprefix(cls.prefix), details=details)

    def __str__(self) -> str:
        return self.message

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CommandError) and other.message == self.message

    def __hash__(self) -> int:
        return hash(self.message)

    def model_dump(self, **_: Any) -> dict[str, Any]:
        """``{"message": ...}``, as the reference's pydantic model dumped."""
        return {"message": self.message}


class CommandNotFoundError(CommandError):
    """No such command or subcommand."""

    code = "command_not_found"
    prefix = "未知命令: "


class CommandPrivilegeError(CommandError):
    """The sender may not run this command."""

    code = "command_privilege"
    prefix = "权限不足: "


class ParamNotEnoughError(CommandError):
    """The command needs more parameters."""

    code = "command_param_not_enough"
    prefix = "参数不足: "


class CommandOperationError(CommandError):
    """The command ran but its operation failed."""

    code = "command_operation_failed"
    prefix = "操作失败: "
