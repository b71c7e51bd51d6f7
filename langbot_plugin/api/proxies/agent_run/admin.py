"""The admin run API of the reference (queue claims, runtime registry, statistics).

It is not supported by this SDK: the reference sends these calls without any run
scope, leaving all authorization to the host. Every method exists, so code written
for the reference imports and fails clearly: it raises
:class:`~langbot_plugin.api.entities.builtin.agent_runner.errors.AgentAPIException`
with code ``not_supported`` and sends nothing.
"""

from __future__ import annotations

from typing import Any, NoReturn

from langbot_plugin.api.entities.builtin.agent_runner.errors import (
    AgentAPIError,
    AgentAPIException,
)
from langbot_plugin.api.entities.builtin.agent_runner.result import AgentRunResult
from langbot_plugin.api.entities.builtin.agent_runner.run_ledger import (
    AgentRun,
    AgentRunEvent,
    RunEventPage,
    RunPage,
)
from langbot_plugin.api.entities.builtin.agent_runner.runtime_registry import (
    AgentRuntime,
    RuntimePage,
)
from langbot_plugin.api.entities.builtin.agent_runner.stats import (
    RunnerStatsPage,
    RunStats,
    RuntimeStats,
)
from langbot_plugin.api.proxies.channel import Channel
from langbot_plugin.protocol.host_api import run_ledger as rl
from langbot_plugin.protocol.spec import ActionSpec

__all__ = [
    "AgentAPIError",
    "AgentAPIException",
    "AgentRun",
    "AgentRunAdminAPIProxy",
    "AgentRunEvent",
    "AgentRunResult",
    "AgentRuntime",
    "RunEventPage",
    "RunPage",
    "RunStats",
    "RunnerStatsPage",
    "RuntimePage",
    "RuntimeStats",
]


def _unsupported(spec: ActionSpec[Any, Any]) -> NoReturn:
    raise AgentAPIException.of(
        "not_supported",
        f"AgentRunAdminAPIProxy.{spec.name} is not supported: admin run APIs carry no run "
        "scope; use the run-scoped AgentRunAPIProxy",
        details={"method": spec.name},
    )


class AgentRunAdminAPIProxy:
    """Admin run APIs; every call raises ``not_supported`` without sending."""

    def __init__(self, plugin_runtime_handler: Channel | None = None) -> None:
        self.plugin_runtime_handler = plugin_runtime_handler

    async def run_get(self, run_id: str) -> NoReturn:
        _unsupported(rl.RUN_GET)

    async def run_list(
        self,
        conversation_id: str | None = None,
        statuses: list[str] | None = None,
        before_cursor: str | None = None,
        limit: int = 50,
    ) -> NoReturn:
        _unsupported(rl.RUN_LIST)

    async def run_events_page(
        self,
        run_id: str,
        before_cursor: str | None = None,
        after_cursor: str | None = None,
        limit: int = 50,
        direction: str = "forward",
    ) -> NoReturn:
        _unsupported(rl.RUN_EVENTS_PAGE)

    async def run_cancel(self, run_id: str, reason: str | None = None) -> NoReturn:
        _unsupported(rl.RUN_CANCEL)

    async def run_append_result(self, result: AgentRunResult) -> NoReturn:
        _unsupported(rl.RUN_APPEND_RESULT)

    async def run_finalize(  # noqa: PLR0917 -- reference signature
        self,
        run_id: str,
        status: str,
        reason: str | None = None,
        usage: dict[str, Any] | None = None,
        cost: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> NoReturn:
        _unsupported(rl.RUN_FINALIZE)

    async def runtime_register(self, runtime_id: str, *args: Any, **kwargs: Any) -> NoReturn:
        _unsupported(rl.RUNTIME_REGISTER)

    async def runtime_heartbeat(self, runtime_id: str, *args: Any, **kwargs: Any) -> NoReturn:
        _unsupported(rl.RUNTIME_HEARTBEAT)

    async def runtime_list(self, *args: Any, **kwargs: Any) -> NoReturn:
        _unsupported(rl.RUNTIME_LIST)

    async def runner_list(self, include_plugins: list[str] | None = None) -> NoReturn:
        _unsupported(rl.RUNNER_LIST)

    async def runtime_reconcile(self, stale_after_seconds: float | None = None) -> NoReturn:
        _unsupported(rl.RUNTIME_RECONCILE)

    async def run_claim(self, runtime_id: str, *args: Any, **kwargs: Any) -> NoReturn:
        _unsupported(rl.RUN_CLAIM)

    async def run_renew_claim(self, run_id: str, *args: Any, **kwargs: Any) -> NoReturn:
        _unsupported(rl.RUN_RENEW_CLAIM)

    async def run_release_claim(self, run_id: str, *args: Any, **kwargs: Any) -> NoReturn:
        _unsupported(rl.RUN_RELEASE_CLAIM)

    async def run_stats(self, *args: Any, **kwargs: Any) -> NoReturn:
        _unsupported(rl.RUN_STATS)

    async def runtime_stats(self) -> NoReturn:
        _unsupported(rl.RUNTIME_STATS)

    async def runner_stats(self, *args: Any, **kwargs: Any) -> NoReturn:
        _unsupported(rl.RUNNER_STATS)
