"""Errors a command reports to the user.

Unlike the reference, these are real exceptions (a command handler may ``raise``
them), while keeping the reference surface: ``CommandError(message)``, ``.message``,
``str()`` and ``model_dump()``. In a :class:`~.context.CommandReturn` an error travels
as its message string.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CommandError",
    "CommandNotFoundError",
    "CommandOperationError",
    "CommandPrivilegeError",
    "ParamNotEnoughError",
]


class CommandError(Exception):
    """A command failed; ``message`` is shown to the user."""

    #: Prepended to the message by the subclasses.
    prefix: str = ""
    #: What the user is shown (the prefix included).
    message: str = ""

    def __init__(self, message: str = "") -> None:
        self.message = self.prefix + message
        super().__init__(self.message)

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

    prefix = "未知命令: "


class CommandPrivilegeError(CommandError):
    """The sender may not run this command."""

    prefix = "权限不足: "


class ParamNotEnoughError(CommandError):
    """The command needs more parameters."""

    prefix = "参数不足: "


class CommandOperationError(CommandError):
    """The command ran but its operation failed."""

    prefix = "操作失败: "
