"""``Runner``: the 0.7 name of the runner component, for plugins written against the 0.7
SDK (``lbp comp Runner`` scaffolds it).

It is :class:`~langbot_plugin.api.definition.components.agent_runner.runner.AgentRunner`
with a default :meth:`Runner.run`: override ``run(ctx)`` (an async generator of results,
or a coroutine that replies through ``ctx``), or register typed event callbacks with
:meth:`~AgentRunner.handler` in ``initialize``. Both get the same context bound to the
run's API; the worker drives both through :meth:`~AgentRunner.invoke`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langbot_plugin.api.definition.components.agent_runner.runner import AgentRunner
from langbot_plugin.api.definition.components.base import BaseComponent
from langbot_plugin.api.entities._lazy import lazy_names
from langbot_plugin.api.proxies.invocation import (
    bind_invocation,
    current_binding,
    current_config,
)

if TYPE_CHECKING:
    from langbot_plugin.api.entities.builtin.agent_runner.context import AgentRunContext
    from langbot_plugin.api.entities.builtin.platform.events import EBAEvent
    from langbot_plugin.api.entities.builtin.runner.context import RunnerContext
    from langbot_plugin.api.entities.builtin.runner.result import RunnerResult
    from langbot_plugin.api.proxies.runner.api import RunnerAPIProxy

__all__ = [
    "BaseComponent",
    "EBAEvent",
    "Runner",
    "RunnerAPIProxy",
    "RunnerContext",
    "RunnerResult",
    "bind_invocation",
    "current_binding",
    "current_config",
]

#: Names this module offers without importing their modules until asked.
__getattr__ = lazy_names(
    __name__,
    {
        "langbot_plugin.api.entities.builtin.platform.events": "EBAEvent",
        "langbot_plugin.api.proxies.runner.api": "RunnerAPIProxy",
        "langbot_plugin.api.entities.builtin.runner.context": "RunnerContext",
        "langbot_plugin.api.entities.builtin.runner.result": "RunnerResult",
    },
)


class Runner(AgentRunner):
    """One runner contract for agent engines and event-driven plugin logic."""

    __kind__ = "Runner"

    def run(self, ctx: AgentRunContext) -> Any:
        """By default: call the callbacks registered for the event's class.

        A plain method returning the coroutine (typed ``Any``, as
        :meth:`AgentRunner.run` is), so that an override may be an async generator or a
        coroutine and still type-check as one."""
        return self.dispatch_event(ctx)
