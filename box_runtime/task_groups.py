"""A task group's lone error re-raised as itself, not as a one-element exception group."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

__all__ = ["single_error"]


@contextmanager
def single_error() -> Generator[None]:
    """Unwrap ``BaseExceptionGroup([exc])`` raised inside the block into ``exc``."""
    try:
        yield
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1:
            only = group.exceptions[0]
            raise only from only.__cause__  # keep its own cause (a bind's OSError)
        raise
