"""Errors raised by platform adapters."""

from __future__ import annotations

__all__ = ["NotSupportedError"]


class NotSupportedError(Exception):
    """The adapter does not implement the named platform API."""

    def __init__(self, api_name: str, *args: object) -> None:
        super().__init__(f"API '{api_name}' is not supported by this adapter", *args)
        self.api_name = api_name
