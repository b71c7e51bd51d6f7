"""Refusals of the host's run machinery, each with a stable wire code.

The run refusals and :class:`BoxFilesError` live in :mod:`langbot_plugin.protocol.errors`
(their tree and codes are there), shared with the plugin runtime's own pre-checks so a
runner sees one vocabulary whichever side refused. Other failures use the RPC layer's
classes, plus :class:`StateQuotaError` ``state_quota_exceeded``.
"""

from __future__ import annotations

from langbot_plugin.protocol.errors import (
    ApiNotAvailableError,
    BoxFilesError,
    ResourceNotGrantedError,
    RunDeadlineError,
    RunNotLiveError,
    RunNotOwnedError,
)
from langbot_plugin.rpc.errors import MessageTooLargeError

__all__ = [
    "ApiNotAvailableError",
    "BoxFilesError",
    "ResourceNotGrantedError",
    "RunDeadlineError",
    "RunNotLiveError",
    "RunNotOwnedError",
    "StateQuotaError",
]


class StateQuotaError(MessageTooLargeError):
    """A state scope already holds its maximum number of keys."""

    code = "state_quota_exceeded"
