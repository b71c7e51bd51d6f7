"""Typed shapes of the run API's dict answers (declared in the catalogue).

These are ``TypedDict`` s: at run time they are the plain dicts the host sent (so
code written for the reference, e.g. ``answer.get("value")``, keeps working), and a
type checker knows their keys. The same declarations validate the host's answers.
"""

from __future__ import annotations

from langbot_plugin.protocol.host_api.models import RerankResult, ToolDetail
from langbot_plugin.protocol.host_api.run_context import (
    StateDeleteResult,
    StateGetResult,
    StateListResult,
    StateSetResult,
)

__all__ = [
    "RerankResult",
    "StateDeleteResult",
    "StateGetResult",
    "StateListResult",
    "StateSetResult",
    "ToolDetail",
]
