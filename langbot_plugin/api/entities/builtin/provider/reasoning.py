"""How much a model should reason in one call, independent of the provider."""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["REASONING_LEVELS", "ReasoningLevel"]

#: ``provider_default`` leaves the provider's own setting; ``disabled``/``enabled``
#: switch reasoning off or on; the others ask for increasing effort.
ReasoningLevel = Literal[
    "provider_default",
    "disabled",
    "enabled",
    "minimal",
    "low",
    "medium",
    "high",
    "xhigh",
    "max",
]

#: The levels, in increasing order of effort after the first three.
REASONING_LEVELS: tuple[str, ...] = get_args(ReasoningLevel)
