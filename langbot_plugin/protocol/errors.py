"""Refusals of run-scoped calls, shared by every side that checks a run's grants.

The plugin runtime checks a call carrying ``run_id`` before forwarding it, and the
host checks it again; both refuse with these classes (their codes are in the tree of
docs/errors.md), so a runner sees one vocabulary whichever side refused. Declared
here, below the runtime, so that the runtime relays their codes unchanged.
"""

from __future__ import annotations

from langbot_plugin.rpc.errors import (
    InvalidParamsError,
    PermissionDeniedError,
    TooManyRequestsError,
)

__all__ = [
    "ApiNotAvailableError",
    "BoxFilesError",
    "ResourceNotGrantedError",
    "RunDeadlineError",
    "RunNotLiveError",
    "RunNotOwnedError",
    "RunRateLimitedError",
]


class RunNotLiveError(PermissionDeniedError):
    """No live run has this id: never started, finished, cancelled or expired."""

    code = "run_not_live"


class RunNotOwnedError(PermissionDeniedError):
    """The run belongs to another plugin (or the caller did not say who it is)."""

    code = "run_not_owned"


class RunDeadlineError(PermissionDeniedError):
    """The run is past its ``deadline_at``."""

    code = "deadline_exceeded"


class ResourceNotGrantedError(PermissionDeniedError):
    """The model, tool, knowledge base, storage area or scope is outside the grants."""

    code = "resource_not_granted"


class ApiNotAvailableError(PermissionDeniedError):
    """The context API is off in the run's ``available_apis``."""

    code = "api_not_available"


class BoxFilesError(InvalidParamsError):
    """An export or a delivery of Box files was refused (seed 004); the instance's code
    says which, and ``details`` say what to do (``files_retained``, ``sandbox_paths``,
    ``limit``/``actual`` or ``reason``)."""

    code = "box"


class RunRateLimitedError(TooManyRequestsError):
    """A run made more host calls than its rate allows (``details.retry_after_sec``)."""

    code = "rate_limited"
    retryable = True
