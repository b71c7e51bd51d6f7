"""The run-scoped host API under its 0.7 names: ``RunnerAPIProxy`` *is*
:class:`~langbot_plugin.api.proxies.agent_run.AgentRunAPIProxy` and
``RunnerAdminAPIProxy`` is ``AgentRunAdminAPIProxy``; each submodule (``api``, ``box``,
``platform``, ``reply_stream``, ``tracing``, ...) names what its 0.7 namesake did.
"""

from langbot_plugin.api.entities.builtin.agent_runner.errors import PermissionDeniedError
from langbot_plugin.api.proxies.runner.admin import RunnerAdminAPIProxy
from langbot_plugin.api.proxies.runner.api import RunnerAPIProxy

__all__ = ["PermissionDeniedError", "RunnerAPIProxy", "RunnerAdminAPIProxy"]
