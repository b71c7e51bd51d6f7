"""Errors of the action-RPC layer, each with a stable wire code.

The root is :class:`RPCError`; the whole tree, with the plugin API's and the run
machinery's subclasses, is in docs/errors.md. Every subclass declares a class-level
``code``; subclasses defined in other packages (the Box runtime, the plugin API)
register themselves automatically, so a caller can re-raise the exact class from the
code a peer sent. An instance may carry a finer code than its class
(``permission_denied.resource``): a peer re-raises it as the class of the part before
the first dot, with the finer code kept. The wire ``message`` keeps the
``"ClassName: text"`` form that reference peers display; our peers never parse it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, Self

if TYPE_CHECKING:
    from langbot_plugin.rpc.error_info import ErrorInfo

__all__ = [
    "ActionNotFoundError",
    "CallCancelledError",
    "ConflictError",
    "ConnectionClosedError",
    "ErrorRecord",
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


class ErrorRecord(Protocol):
    """An error as data (``AgentAPIError``): what :class:`RPCError` can be built from."""

    @property
    def code(self) -> str: ...

    @property
    def message(self) -> str: ...

    @property
    def retryable(self) -> bool: ...

    @property
    def details(self) -> dict[str, Any]: ...


class RPCError(Exception):
    """Root of every error that can cross the wire.

    ``RPCError("text", details={...})``; ``details`` is a small JSON object sent beside
    the code (for example the limit that was exceeded and the actual value). ``code``
    and ``retryable`` default to the class's; ``code=`` gives this one error a finer
    code. ``RPCError(record)`` or ``RPCError(error=record)`` (an ``AgentAPIError``) and
    :meth:`of` build the same from its parts, as the run API does; :attr:`error` is the
    record back.
    """

    code: str = "rpc_error"
    retryable: bool = False
    #: Set on an error re-created from a peer's answer: the peer's wire ``message`` and
    #: ``error_type``, so a relay that passes the error on can show it as it came.
    peer_message: str | None = None
    peer_type: str | None = None
    #: The peer's structured run-API error as it came (``data.error``: ``code``,
    #: ``message``, ``retryable``, ``details``; the released host sends one for a
    #: refused export), passed on by a relay so the plugin's SDK reads the same.
    peer_error: dict[str, Any] | None = None

    def __init__(
        self,
        message: str | ErrorRecord = "",
        *,
        details: dict[str, Any] | None = None,
        code: str | None = None,
        retryable: bool | None = None,
        error: ErrorRecord | None = None,
    ) -> None:
        record: ErrorRecord | None = None
        if error is not None:  # AgentAPIException(error=record), the reference's keyword
            message = error
        if not isinstance(message, str):
            record, message = message, message.message
            code = record.code if code is None else code
            retryable = record.retryable if retryable is None else retryable
            details = record.details if details is None else details
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = dict(details or {})
        if code is not None:
            self.code = code
        if retryable is not None:
            self.retryable = retryable
        self._record = record

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        code = cls.__dict__.get("code")
        if code is None:
            return
        existing = _BY_CODE.get(code)
        if existing is not None and existing.__qualname__ != cls.__qualname__:
            raise TypeError(f"error code {code!r} already belongs to {existing.__qualname__}")
        _BY_CODE[code] = cls

    @classmethod
    def of(
        cls,
        code: str,
        message: str,
        *,
        retryable: bool = False,
        details: dict[str, Any] | None = None,
    ) -> Self:
        """This class with a finer ``code`` (the run API's ``AgentAPIException.of``)."""
        return cls(message, details=details, code=code, retryable=retryable)

    @classmethod
    def from_wire(
        cls, message: str, *, code: str, details: dict[str, Any] | None, retryable: bool
    ) -> Self:
        """Re-create the error a peer reported (a subclass whose constructor differs
        overrides this)."""
        return cls(message, details=details, code=code, retryable=retryable)

    #: A record a subclass assigned to :attr:`error` itself.
    _assigned_error: ErrorInfo | None = None

    @property
    def error(self) -> ErrorInfo:
        """The error as data: ``code``, ``message``, ``retryable``, ``details``."""
        from langbot_plugin.rpc.error_info import ErrorInfo

        if self._assigned_error is not None:
            return self._assigned_error
        if isinstance(self._record, ErrorInfo):
            return self._record
        return ErrorInfo(
            code=self.code, message=self.message, retryable=self.retryable, details=self.details
        )

    @error.setter
    def error(self, record: ErrorInfo) -> None:
        # The reference's exceptions are plain ones: a subclass may set ``self.error``
        # (the released host's ``BoxExportError`` does, before it calls ``__init__``).
        self._assigned_error = record

    @property
    def wire_type(self) -> str:
        """The class name shown in the wire ``message``."""
        return type(self).__name__

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


class RemoteError(RPCError):
    """The peer reported an error whose code has no class on this side.

    ``remote_code`` keeps whatever code the peer sent (empty for reference peers,
    which send none) and ``remote_type`` the class name it gave; ``message`` keeps the
    peer's full text. A relay that passes the error on sends both unchanged, so the
    code reaches a peer that knows it.
    """

    code = "remote_error"

    def __init__(
        self,
        message: str = "",
        *,
        remote_code: str = "",
        remote_type: str = "",
        details: dict[str, Any] | None = None,
        retryable: bool | None = None,
    ) -> None:
        super().__init__(message, details=details, retryable=retryable)
        self.remote_code = remote_code
        self.remote_type = remote_type


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
    retryable = True


class RPCTimeoutError(RPCError, TimeoutError):
    """A call got no (complete) answer in time; the peer was asked to cancel it."""

    code = "timeout"
    retryable = True


class CallCancelledError(RPCError):
    """The call was cancelled before it completed."""

    code = "cancelled"


class ConnectionClosedError(RPCError, ConnectionError):
    """The connection closed while the call was pending."""

    code = "connection_closed"
    retryable = True


class PermissionDeniedError(RPCError, PermissionError):
    """The caller is not allowed to do this. The run API raises it (with a finer code,
    ``permission_denied.resource`` ...) before sending a call the run's grants refuse;
    the runtime's and host's refusals are its subclasses."""

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
    """The action exists but this peer does not support it (yet, or in this mode).

    Platform adapters raise it with the API's name, as in the reference:
    ``NotSupportedError("upload_file")`` reads "API 'upload_file' is not supported by
    this adapter" and keeps :attr:`api_name`.
    """

    code = "not_supported"

    def __init__(
        self,
        message: str | ErrorRecord = "",
        *args: object,
        details: dict[str, Any] | None = None,
        code: str | None = None,
        retryable: bool | None = None,
        api_name: str | None = None,
    ) -> None:
        del args  # the reference passed extra arguments to Exception; they mean nothing
        if api_name is None and isinstance(message, str) and message.isidentifier():
            api_name, message = message, ""
        if api_name is not None and message == "":
            message = f"API '{api_name}' is not supported by this adapter"
        if api_name is not None:
            details = {**(details or {}), "api_name": api_name}
        super().__init__(message, details=details, code=code, retryable=retryable)
        name = self.details.get("api_name")
        self.api_name: str | None = name if isinstance(name, str) else None


class NotReadyError(RPCError):
    """The peer is not ready for this action yet (for example before its handshake)."""

    code = "not_ready"
    retryable = True


class InternalError(RPCError):
    """A handler failed unexpectedly; ``message`` names the original exception."""

    code = "internal_error"


def error_class_for_code(code: str) -> type[RPCError] | None:
    """The registered class for a wire code (a finer ``class_code.detail`` code maps to
    the class of ``class_code``), or ``None``."""
    found = _BY_CODE.get(code)
    if found is None and "." in code:
        found = _BY_CODE.get(code.split(".", 1)[0])
    return found


# The root registers too, so "rpc_error" maps back to it.
_BY_CODE[RPCError.code] = RPCError
