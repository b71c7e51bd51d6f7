"""What every plugin -> host payload may carry, and the shapes several actions share."""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, Field

from langbot_plugin.protocol.spec import ActionSpec, Direction, Params

__all__ = [
    "MAX_TIMEOUT",
    "CallerParams",
    "QueryParams",
    "RunScopedParams",
    "to_host",
]

P = TypeVar("P", bound=BaseModel)
R = TypeVar("R")

#: The longest wait a payload ``timeout`` may ask the runtime for (seconds).
MAX_TIMEOUT = 600.0


def to_host(
    name: str,
    params: type[P],
    result: type[R],
    *,
    timeout: float = 30.0,
    stream: bool = False,
    doc: str = "",
    files: tuple[str, ...] = (),
) -> ActionSpec[P, R]:
    """A plugin -> host action (relayed by the runtime): waits ``timeout`` seconds by
    default, up to :data:`MAX_TIMEOUT` when the payload asks for longer."""
    return ActionSpec(
        name,
        params,
        result,
        stream=stream,
        doc=doc,
        direction=Direction.PLUGIN_TO_HOST,
        timeout=timeout,
        max_timeout=MAX_TIMEOUT,
        files=files,
    )


class CallerParams(Params):
    """``caller_plugin_identity`` is set by the runtime from the plugin's connection
    (a value the plugin sends is dropped)."""

    caller_plugin_identity: str | None = None


class RunScopedParams(CallerParams):
    """A call made for an agent run carries its ``run_id``; the runtime and the host
    check it against the run's grants. Without it the call is a plain plugin call."""

    run_id: str | None = None


class QueryParams(CallerParams):
    """A call about one query (the request an event or command belongs to)."""

    query_id: int = 0
    query_uuid: str | None = Field(default=None)
