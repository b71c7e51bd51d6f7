"""The one error of a ``lbp dev`` session."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["DevError"]


class DevError(Exception):
    """The session cannot start (or go on); ``lines`` say why, ``usage`` whether it is
    the author's input (a plugin that does not load, a runner that does not exist)."""

    def __init__(self, message: str, lines: Sequence[str] = (), *, usage: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.lines = list(lines)
        self.usage = usage
