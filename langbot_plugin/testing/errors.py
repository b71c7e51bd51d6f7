"""What the harness raises when it cannot do what a test asked."""

from __future__ import annotations

__all__ = ["HarnessError"]


class HarnessError(Exception):
    """The plugin cannot be loaded or started, or a call cannot be made as asked
    (no such runner, two runners and none named...). The message says which."""
