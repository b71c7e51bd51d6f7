"""Errors of the run-scoped host APIs (the whole tree: :mod:`langbot_plugin.api.errors`).

``AgentAPIException`` is the plugin API's exception root,
:class:`~langbot_plugin.rpc.errors.RPCError`, under the name the run API has always
used: every failure of ``AgentRunAPIProxy`` is one, with a stable ``code``,
``message``, ``retryable`` and ``details``, and ``.error`` (an :class:`AgentAPIError`)
holds the same as data. ``PermissionDeniedError`` is the one refusal class of the
plugin API. The codes the run API raises are listed in ``docs/errors.md``, and so are
Protocol v1's seven coarser codes (:data:`PROTOCOL_V1_CODES`), which
:func:`protocol_v1_code` and :func:`protocol_v1_error` map ours onto (our finer code
kept in ``details["code"]``).
"""

from __future__ import annotations

from langbot_plugin.api.entities.builtin.agent_runner import compat
from langbot_plugin.rpc.error_info import ErrorInfo
from langbot_plugin.rpc.errors import PermissionDeniedError, RPCError

__all__ = [
    "PROTOCOL_V1_CODES",
    "AgentAPIError",
    "AgentAPIException",
    "PermissionDeniedError",
    "as_protocol_v1",
    "protocol_v1_code",
    "protocol_v1_error",
]

#: A structured error of a run-scoped API call: ``code``, ``message``, ``retryable``,
#: ``details``.
AgentAPIError = ErrorInfo

#: Raised by :class:`~langbot_plugin.api.proxies.agent_run.AgentRunAPIProxy`
#: (``AgentAPIException(AgentAPIError(...))`` or ``AgentAPIException.of(code, message)``);
#: ``str(exc)`` is the message.
AgentAPIException = RPCError

#: The reference imported its model configuration here; kept at this path.
HOST_RESPONSE_MODEL_CONFIG = compat.HOST_RESPONSE_MODEL_CONFIG

#: The error codes of seed 003's Protocol v1 (its ``AgentAPIError``).
PROTOCOL_V1_CODES = (
    "unauthorized",
    "not_found",
    "deadline_exceeded",
    "payload_too_large",
    "rate_limited",
    "invalid_argument",
    "runtime_error",
)

#: Our code (or its first dotted part) -> Protocol v1 code; anything else is
#: ``runtime_error``.
_PROTOCOL_V1: dict[str, str] = {
    "permission_denied": "unauthorized",
    "run_not_live": "unauthorized",
    "run_not_owned": "unauthorized",
    "resource_not_granted": "unauthorized",
    "api_not_available": "unauthorized",
    "unauthenticated": "unauthorized",
    "not_found": "not_found",
    "not_supported": "not_found",
    "action_not_found": "not_found",
    "box.files.not_deliverable": "not_found",
    "deadline_exceeded": "deadline_exceeded",
    "timeout": "deadline_exceeded",
    "payload_too_large": "payload_too_large",
    "message_too_large": "payload_too_large",
    "box.export.limit_exceeded": "payload_too_large",
    "rate_limited": "rate_limited",
    "too_many_requests": "rate_limited",
    "invalid_argument": "invalid_argument",
    "invalid_params": "invalid_argument",
    "box.export.refused": "invalid_argument",
}


def protocol_v1_code(code: str) -> str:
    """The Protocol v1 code for one of our codes (``permission_denied.resource`` ->
    ``unauthorized``, ``not_supported`` -> ``not_found``, ``host.action_error`` ->
    ``runtime_error``)."""
    if code in PROTOCOL_V1_CODES:
        return code
    return _PROTOCOL_V1.get(code) or _PROTOCOL_V1.get(code.split(".", 1)[0], "runtime_error")


def protocol_v1_error(exc: BaseException) -> AgentAPIError:
    """``exc`` as Protocol v1's ``AgentAPIError``: its code mapped, our code in
    ``details["code"]``; an exception that is not ours is a ``runtime_error``."""
    if isinstance(exc, RPCError):
        details = {**exc.details, "code": exc.code}
        return AgentAPIError(
            code=protocol_v1_code(exc.code),
            message=exc.message,
            retryable=exc.retryable,
            details=details,
        )
    message = str(exc) or type(exc).__name__
    return AgentAPIError(
        code="runtime_error", message=message, details={"type": type(exc).__name__}
    )


def as_protocol_v1(exc: BaseException) -> AgentAPIException:
    """The exception the namespaced run API raises for ``exc``: a
    :class:`PermissionDeniedError` for ``unauthorized``, else an
    :class:`AgentAPIException`, carrying :func:`protocol_v1_error`."""
    error = protocol_v1_error(exc)
    cls = PermissionDeniedError if error.code == "unauthorized" else AgentAPIException
    return cls.of(error.code, error.message, retryable=error.retryable, details=error.details)
