"""Errors of the action-RPC layer, each with a stable wire code.

Exception tree (the root is :class:`RPCError`)::

    RPCError                      rpc_error
    ├── RemoteError               remote_error        peer sent an error we have no class for
    ├── ActionNotFoundError       action_not_found
    ├── InvalidParamsError        invalid_params
    ├── MalformedMessageError     malformed_message
    ├── MessageTooLargeError      message_too_large
    ├── TooManyRequestsError      too_many_requests
    ├── RPCTimeoutError           timeout
    ├── CallCancelledError        cancelled
    ├── ConnectionClosedError     connection_closed
    ├── PermissionDeniedError     permission_denied
    ├── UnauthenticatedError      unauthenticated
    ├── NotFoundError             not_found
    ├── ConflictError             conflict
    ├── NotSupportedError         not_supported
    ├── NotReadyError             not_ready
    └── InternalError             internal_error      a handler raised something unexpected

Every subclass declares a class-level ``code``; subclasses defined in other packages
(the Box runtime, the plugin API) register themselves automatically, so a caller can
re-raise the exact class from the code a peer sent. The wire ``message`` keeps the
``"ClassName: text"`` form that reference peers display; our peers never parse it.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "ActionNotFoundError",
    "CallCancelledError",
    "ConflictError",
    "ConnectionClosedError",
    "InternalError",
    "InvalidParamsError",
    "MalformedMessageError",
    "MessageTooLargeError",
    "NotFoundError",
    "NotReadyError",
    "NotSupportedError",
    "PermissionDeniedError",
    "RPCError",
    "RPCTimeoutError",
    "RemoteError",
    "TooManyRequestsError",
    "UnauthenticatedError",
    "error_class_for_code",
]

_BY_CODE: dict[str, type[RPCError]] = {}


class RPCError(Exception):
    """Root of every error that can cross the wire.

    ``details`` is a small JSON object sent beside the code (for example the limit
    that was exceeded and the actual value).
    """

    code: ClassVar[str] = "rpc_error"

    def __init__(self, message: str = "", *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = dict(details or {})

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        code = cls.__dict__.get("code")
        if code is None:
            return
        existing = _BY_CODE.get(code)
        if existing is not None and existing.__qualname__ != cls.__qualname__:
            raise TypeError(f"error code {code!r} already belongs to {existing.__qualname__}")
        _BY_CODE[code] = cls

    @property
    def wire_type(self) -> str:
        """The class name shown in the wire ``message``."""
        return type(self).__name__


class RemoteError(RPCError):
    """The peer reported an error whose code has no class on this side.

    ``remote_code`` keeps whatever code the peer sent (empty for reference peers,
    which send none); ``message`` keeps the peer's full text.
    """

    code = "remote_error"

    def __init__(
        self,
        message: str = "",
        *,
        remote_code: str = "",
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message, details=details)
        self.remote_code = remote_code


class ActionNotFoundError(RPCError):
    """The peer serves no action of that name."""

    code = "action_not_found"


class InvalidParamsError(RPCError):
    """The action's payload does not match its declared parameters."""

    code = "invalid_params"


class MalformedMessageError(RPCError):
    """A frame was not a valid envelope (bad JSON, missing or mistyped fields)."""

    code = "malformed_message"


class MessageTooLargeError(RPCError):
    """A message exceeded the per-message byte limit."""

    code = "message_too_large"


class TooManyRequestsError(RPCError):
    """The connection already runs its maximum number of concurrent actions."""

    code = "too_many_requests"


class RPCTimeoutError(RPCError, TimeoutError):
    """A call got no (complete) answer in time; the peer was asked to cancel it."""

    code = "timeout"


class CallCancelledError(RPCError):
    """The call was cancelled before it completed."""

    code = "cancelled"


class ConnectionClosedError(RPCError, ConnectionError):
    """The connection closed while the call was pending."""

    code = "connection_closed"


class PermissionDeniedError(RPCError, PermissionError):
    """The caller is not allowed to do this."""

    code = "permission_denied"


class UnauthenticatedError(RPCError):
    """The caller did not prove who it is (missing or wrong token or key)."""

    code = "unauthenticated"


class NotFoundError(RPCError, LookupError):
    """The addressed object does not exist."""

    code = "not_found"


class ConflictError(RPCError):
    """The request conflicts with the current state."""

    code = "conflict"


class NotSupportedError(RPCError, NotImplementedError):
    """The action exists but this peer does not support it (yet, or in this mode)."""

    code = "not_supported"


class NotReadyError(RPCError):
    """The peer is not ready for this action yet (for example before its handshake)."""

    code = "not_ready"


class InternalError(RPCError):
    """A handler failed unexpectedly; ``message`` names the original exception."""

    code = "internal_error"


def error_class_for_code(code: str) -> type[RPCError] | None:
    """The registered class for a wire code, or ``None``."""
    return _BY_CODE.get(code)


# The root registers too, so "rpc_error" maps back to it.
_BY_CODE[RPCError.code] = RPCError
