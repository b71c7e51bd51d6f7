"""The run-scoped host API of agent runners.

``AgentRunAPIProxy`` is what ``AgentRunner.get_run_api(ctx)`` returns; calls are
checked against the run's grants, bounded by its deadline and carry its ``run_id``.
Submodules: ``api``, ``common``, ``resources``, ``context``, ``files``, ``ledger``, ``state``,
``admin``, ``types``.
"""

from langbot_plugin.api.entities.builtin.agent_runner.errors import (
    AgentAPIError,
    AgentAPIException,
    PermissionDeniedError,
)
from langbot_plugin.api.proxies.agent_run.admin import AgentRunAdminAPIProxy
from langbot_plugin.api.proxies.agent_run.api import AgentRunAPIProxy

__all__ = [
    "AgentAPIError",
    "AgentAPIException",
    "AgentRunAPIProxy",
    "AgentRunAdminAPIProxy",
    "PermissionDeniedError",
]
