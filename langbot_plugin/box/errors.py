"""The Box's exceptions (the runtime's own classes: a call re-raises the one the Box sent)."""

from __future__ import annotations

from box_runtime import errors as _same
from box_runtime.errors import *  # noqa: F403

__all__: list[str] = []
__all__ += _same.__all__
