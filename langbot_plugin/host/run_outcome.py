"""What the run machinery hands back: a started run, and how a driven run ended."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from langbot_plugin.host.deliveries import Delivery
from langbot_plugin.host.registry import RunSession
from langbot_plugin.host.results import Dropped, NormalizedResult

__all__ = ["OnResult", "RunOutcome", "StartedRun"]

#: Sees each accepted result of a run as it arrives (to deliver deltas).
OnResult = Callable[[NormalizedResult], Awaitable[None] | None]


@dataclass(frozen=True, slots=True)
class StartedRun:
    """A registered run and the context to send with ``run_runner``."""

    context: dict[str, Any]
    session: RunSession

    @property
    def run_id(self) -> str:
        return self.session.run_id


@dataclass
class RunOutcome:
    """How a driven run ended: status, the answer as shown, and what was dropped."""

    run_id: str
    status: str
    text: str
    error: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    results: list[NormalizedResult] = field(default_factory=list[NormalizedResult])
    dropped: list[Dropped] = field(default_factory=list[Dropped])
    #: Replies and exported files the run delivered, in order.
    deliveries: list[Delivery] = field(default_factory=list[Delivery])

    @property
    def messages(self) -> list[str]:
        """The texts of the messages delivered, in order."""
        return [r.text or "" for r in self.results if r.message is not None]
