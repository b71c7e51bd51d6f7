"""Refusals of the host's run machinery, each with a stable wire code.

A run-scoped call (one carrying ``run_id``) is answered only when the run is live,
belongs to the calling plugin and stays within what was granted when the run
started. Every refusal is a :class:`~langbot_plugin.rpc.PermissionDeniedError`
subclass; the code travels in the error response (``data.error_code``) and the
run API turns it into ``AgentAPIException.code``::

    PermissionDeniedError       permission_denied
    ├── RunNotLiveError         run_not_live          unknown, finished, cancelled or timed-out run
    ├── RunNotOwnedError        run_not_owned         caller identity missing or not the owner
    ├── RunDeadlineError        deadline_exceeded     the run is past its ``deadline_at``
    ├── ResourceNotGrantedError resource_not_granted  outside the grants (``details.kind``: model,
    │                                                 tool, knowledge_base, storage, conversation,
    │                                                 state_scope, run, event)
    └── ApiNotAvailableError    api_not_available     the context API is off in ``available_apis``

Other failures use the RPC layer's classes: ``invalid_params`` (a malformed request),
``not_found`` (no such target run or event), ``message_too_large`` (a state value or
key over its limit) and :class:`StateQuotaError` ``state_quota_exceeded``.

Explicit file export (seed 004) refuses with :class:`BoxFilesError` and the reference
host's finer codes: ``box.export.limit_exceeded`` (a limit; ``details`` carry
``limit_type``, ``limit``, ``actual``, ``sandbox_paths``, ``files_retained``),
``box.export.refused`` (a file that cannot be exported: ``details.reason`` is
``symlink``, ``not_regular``, ``missing``, ``unreadable``, ``invalid_path``, ``no_box``
...), ``box.export.invalid_response`` (the Box answered something that does not match
the request) and ``box.files.not_deliverable`` (a handle that is not this run's, or was
already delivered: ``details.reason``). It lives in :mod:`langbot_plugin.protocol.errors`
with the five refusals, for the same reason.

The five refusal classes live in :mod:`langbot_plugin.protocol.errors`, shared with the
plugin runtime's own pre-checks, so a runner sees one vocabulary whichever side refused.
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
