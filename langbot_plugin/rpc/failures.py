"""Failures of background work: logged once, with a code and the peer, never fatal.

A supervisor, a reconciler or a pump serves one peer (a plugin, a host connection, a
managed process); what that peer sends may make its work fail. Such a failure must not
end the daemon: the task catches it, calls :func:`log_failure` and goes on (restarts its
worker, skips the item, drops the connection). The record names the failure's stable
code (the one a wire error would carry, :func:`error_code`) and the peer. A coded error
(an :class:`~langbot_plugin.rpc.errors.RPCError`, a timeout included) is one line; only
an exception nothing mapped, which is a defect to fix, keeps its traceback.
"""

from __future__ import annotations

import logging

from langbot_plugin.rpc.errors import InternalError, RPCError

__all__ = ["error_code", "log_failure"]


def error_code(exc: BaseException) -> str:
    """The stable code of ``exc`` (``internal_error`` for what no code was given)."""
    return exc.code if isinstance(exc, RPCError) else InternalError.code


def log_failure(log: logging.Logger, peer: str, what: str, exc: BaseException) -> None:
    """Record that ``what`` failed for ``peer`` (see the module docstring)."""
    code = error_code(exc)
    if isinstance(exc, RPCError):
        log.error("%s: %s failed (%s): %s", peer, what, code, exc.message)
    else:
        log.error("%s: %s failed (%s): %r", peer, what, code, exc, exc_info=exc)
