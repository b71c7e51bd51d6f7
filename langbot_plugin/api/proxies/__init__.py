"""Proxies through which plugins call the host: plugin-level, query-level and
run-level (``agent_run``). They talk through a :class:`~.channel.Channel`.

The names below are imported on first use, so importing one proxy module (as
``BasePlugin`` does with ``langbot_api``) does not load the whole agent-run tree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from langbot_plugin.api.entities._lazy import lazy_names

if TYPE_CHECKING:
    from langbot_plugin.api.proxies.agent_run import AgentRunAdminAPIProxy, AgentRunAPIProxy
    from langbot_plugin.api.proxies.langbot_api import LangBotAPIProxy
    from langbot_plugin.api.proxies.runner import RunnerAdminAPIProxy, RunnerAPIProxy

__all__ = [
    "AgentRunAPIProxy",
    "AgentRunAdminAPIProxy",
    "LangBotAPIProxy",
    "RunnerAPIProxy",
    "RunnerAdminAPIProxy",
]

__getattr__ = lazy_names(
    __name__,
    {
        "langbot_plugin.api.proxies.agent_run": "AgentRunAPIProxy AgentRunAdminAPIProxy",
        "langbot_plugin.api.proxies.langbot_api": "LangBotAPIProxy",
        "langbot_plugin.api.proxies.runner": "RunnerAPIProxy RunnerAdminAPIProxy",
    },
)
