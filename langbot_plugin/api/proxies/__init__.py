"""Proxies through which plugins call the host: plugin-level, query-level and
run-level (``agent_run``). They talk through a :class:`~.channel.Channel`.

The names below are imported on first use, so importing one proxy module (as
``BasePlugin`` does with ``langbot_api``) does not load the whole agent-run tree.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langbot_plugin.api.proxies.agent_run import AgentRunAdminAPIProxy, AgentRunAPIProxy
    from langbot_plugin.api.proxies.langbot_api import LangBotAPIProxy

__all__ = ["AgentRunAPIProxy", "AgentRunAdminAPIProxy", "LangBotAPIProxy"]

_HOMES = {
    "AgentRunAPIProxy": "langbot_plugin.api.proxies.agent_run",
    "AgentRunAdminAPIProxy": "langbot_plugin.api.proxies.agent_run",
    "LangBotAPIProxy": "langbot_plugin.api.proxies.langbot_api",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
