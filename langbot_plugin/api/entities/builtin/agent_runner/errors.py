"""Errors of the run-scoped host APIs.

Exception tree::

    AgentAPIException            .error: AgentAPIError (code, message, retryable, details)
    └── PermissionDeniedError    a refusal: one of the permission codes below

Stable codes raised by this SDK (codes a runtime or host sends that are not listed are
passed through unchanged):

===============================  ===========================================================
``deadline_exceeded``            the run's ``deadline_at`` passed, or a call timed out
``permission_denied``            the host refused the call
``permission_denied.resource``   model / tool / knowledge base not granted to the run
``permission_denied.operation``  resource granted, operation not
``permission_denied.storage``    plugin or workspace storage not granted
``permission_denied.api``        context API not in ``ctx.context.available_apis``
``run_not_live``                 the runtime: the run has ended (or never started)
``run_not_owned``                the runtime: the run belongs to another plugin
``resource_not_granted``         the runtime: the run's grants do not cover the call
``api_not_available``            the runtime: the context API is off for the run
``not_supported``                the API exists in the reference but not here / on this host
``invalid_argument``             the call's arguments are invalid
``not_found``                    the host has no such object
``payload_too_large``            request or answer over the size limit
``rate_limited``                 the host or runtime is busy
``cancelled``                    the call was cancelled
``runtime_error``                the connection to the runtime failed, or the host failed
``host.malformed_response``      the host's answer lacks a field or has a wrong type
``host.action_error``            the host failed without a code (reference peers)
===============================  ===========================================================
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from langbot_plugin.api.entities.builtin.agent_runner.compat import HOST_RESPONSE_MODEL_CONFIG

__all__ = ["AgentAPIError", "AgentAPIException", "PermissionDeniedError"]


class AgentAPIError(BaseModel):
    """A structured error of a run-scoped API call."""

    model_config = HOST_RESPONSE_MODEL_CONFIG

    code: str
    message: str
    retryable: bool = False
    details: dict[str, Any] = Field(default_factory=dict)


class AgentAPIException(Exception):
    """Raised by :class:`~langbot_plugin.api.proxies.agent_run.AgentRunAPIProxy`;
    ``error`` holds the stable code. ``str(exc)`` is the message."""

    def __init__(self, error: AgentAPIError) -> None:
        self.error = error
        super().__init__(error.message)

    @classmethod
    def of(
        cls,
        code: str,
        message: str,
        *,
        retryable: bool = False,
        details: dict[str, Any] | None = None,
    ) -> AgentAPIException:
        """Build the exception from its parts."""
        return cls(
            AgentAPIError(code=code, message=message, retryable=retryable, details=details or {})
        )

    @property
    def code(self) -> str:
        return self.error.code

    @property
    def retryable(self) -> bool:
        return self.error.retryable

    @property
    def details(self) -> dict[str, Any]:
        return self.error.details

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.error.message!r})"


class PermissionDeniedError(AgentAPIException):
    """The run may not make this call; raised before anything is sent when the run's
    grants already say no, or when the host refuses."""
