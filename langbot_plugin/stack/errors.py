"""The local stack's one error: a piece that does not start."""

from __future__ import annotations

__all__ = ["StackError"]


class StackError(RuntimeError):
    """A piece of the local stack did not start (the message says which and why)."""
