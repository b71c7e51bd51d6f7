"""What a run delivered to its conversation besides the result stream: replies and files.

A host without a platform (tests, local tools) keeps them on the run
(:attr:`~langbot_plugin.host.registry.RunSession.deliveries`) and in
:attr:`~langbot_plugin.host.run_host.RunOutcome.deliveries`, in the order they were sent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["DeliveredFile", "Delivery"]


@dataclass(frozen=True, slots=True)
class DeliveredFile:
    """One exported Box file as it was sent: its handle, name, kind and exact bytes."""

    id: str
    name: str
    type: str
    path: str
    sha256: str
    data: bytes


@dataclass(frozen=True, slots=True)
class Delivery:
    """One message sent for a run: ``reply`` (the run replied on its event, e.g.
    ``reply_files``) or ``message`` (a ``message.completed`` result with ``file_ids``)."""

    via: Literal["reply", "message"]
    files: tuple[DeliveredFile, ...] = ()
    message: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    sequence: int | None = None
