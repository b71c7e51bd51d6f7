"""Typed shapes of the run API's dict answers.

These are ``TypedDict`` s: at run time they are the plain dicts the host sent (so
code written for the reference, e.g. ``answer.get("value")``, keeps working), and a
type checker knows their keys.
"""

from __future__ import annotations

from typing import Any, TypedDict

__all__ = [
    "RerankResult",
    "StateDeleteResult",
    "StateGetResult",
    "StateListResult",
    "StateSetResult",
    "ToolDetail",
]


class ToolDetail(TypedDict, total=False):
    """A tool's description for a model: name, description, JSON-schema parameters."""

    name: str
    description: str
    parameters: dict[str, Any]


class RerankResult(TypedDict):
    """One scored document of a rerank: its index in the input and its score."""

    index: int
    relevance_score: float


class StateGetResult(TypedDict, total=False):
    """``value`` is ``None`` when the key is not set."""

    value: Any


class StateSetResult(TypedDict, total=False):
    """``success`` tells whether the value was stored."""

    success: bool


class StateDeleteResult(TypedDict, total=False):
    """``success`` is false when the key did not exist."""

    success: bool


class StateListResult(TypedDict, total=False):
    """Keys of a scope (up to the requested limit) and whether more exist."""

    keys: list[str]
    has_more: bool
