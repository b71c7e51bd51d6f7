"""Errors of the run-scoped host APIs (the whole tree: :mod:`langbot_plugin.api.errors`).

``AgentAPIException`` is the plugin API's exception root,
:class:`~langbot_plugin.rpc.errors.RPCError`, under the name the run API has always
used: every failure of ``AgentRunAPIProxy`` is one, with a stable ``code``,
``message``, ``retryable`` and ``details``, and ``.error`` (an :class:`AgentAPIError`)
holds the same as data. ``PermissionDeniedError`` is the one refusal class of the
plugin API. The codes the run API raises are listed in ``docs/errors.md``.
"""

from __future__ import annotations

from langbot_plugin.api.entities.builtin.agent_runner import compat
from langbot_plugin.rpc.error_info import ErrorInfo
from langbot_plugin.rpc.errors import PermissionDeniedError, RPCError

__all__ = ["AgentAPIError", "AgentAPIException", "PermissionDeniedError"]

#: A structured error of a run-scoped API call: ``code``, ``message``, ``retryable``,
#: ``details``.
AgentAPIError = ErrorInfo

#: Raised by :class:`~langbot_plugin.api.proxies.agent_run.AgentRunAPIProxy`
#: (``AgentAPIException(AgentAPIError(...))`` or ``AgentAPIException.of(code, message)``);
#: ``str(exc)`` is the message.
AgentAPIException = RPCError

#: The reference imported its model configuration here; kept at this path.
HOST_RESPONSE_MODEL_CONFIG = compat.HOST_RESPONSE_MODEL_CONFIG
