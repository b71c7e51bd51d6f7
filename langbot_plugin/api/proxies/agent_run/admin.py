"""The admin run API of the reference (queue claims, runtime registry, statistics).

It is not supported by this SDK: the reference sends these calls without any run
scope, leaving all authorization to the host. Every method exists, so code written
for the reference imports and fails clearly: it raises
:class:`~langbot_plugin.api.entities.builtin.agent_runner.errors.AgentAPIException`
with code ``not_supported`` and sends nothing.
"""

from __future__ import annotations

from typing import Any, NoReturn

from langbot_plugin.api.entities.builtin.agent_runner.errors import AgentAPIException
from langbot_plugin.api.entities.builtin.agent_runner.result import AgentRunResult
from langbot_plugin.api.proxies.channel import Channel

__all__ = ["AgentRunAdminAPIProxy"]


def _unsupported(method: str) -> NoReturn:
    raise AgentAPIException.of(
        "not_supported",
        f"AgentRunAdminAPIProxy.{method} is not supported: admin run APIs carry no run "
        "scope; use the run-scoped AgentRunAPIProxy",
        details={"method": method},
    )


class AgentRunAdminAPIProxy:
    """Admin run APIs; every call raises ``not_supported`` without sending."""

    def __init__(self, plugin_runtime_handler: Channel | None = None) -> None:
        self.plugin_runtime_handler = plugin_runtime_handler

    async def run_get(self, run_id: str) -> NoReturn:
        _unsupported("run_get")

    async def run_list(
        self,
        conversation_id: str | None = None,
        statuses: list[str] | None = None,
        before_cursor: str | None = None,
        limit: int = 50,
    ) -> NoReturn:
        _unsupported("run_list")

    async def run_events_page(
        self,
        run_id: str,
        before_cursor: str | None = None,
        after_cursor: str | None = None,
        limit: int = 50,
        direction: str = "forward",
    ) -> NoReturn:
        _unsupported("run_events_page")

    async def run_cancel(self, run_id: str, reason: str | None = None) -> NoReturn:
        _unsupported("run_cancel")

    async def run_append_result(self, result: AgentRunResult) -> NoReturn:
        _unsupported("run_append_result")

    async def run_finalize(  # noqa: PLR0917 -- reference signature
        self,
        run_id: str,
        status: str,
        reason: str | None = None,
        usage: dict[str, Any] | None = None,
        cost: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> NoReturn:
        _unsupported("run_finalize")

    async def runtime_register(self, runtime_id: str, *args: Any, **kwargs: Any) -> NoReturn:
        _unsupported("runtime_register")

    async def runtime_heartbeat(self, runtime_id: str, *args: Any, **kwargs: Any) -> NoReturn:
        _unsupported("runtime_heartbeat")

    async def runtime_list(self, *args: Any, **kwargs: Any) -> NoReturn:
        _unsupported("runtime_list")

    async def runner_list(self, include_plugins: list[str] | None = None) -> NoReturn:
        _unsupported("runner_list")

    async def runtime_reconcile(self, stale_after_seconds: float | None = None) -> NoReturn:
        _unsupported("runtime_reconcile")

    async def run_claim(self, runtime_id: str, *args: Any, **kwargs: Any) -> NoReturn:
        _unsupported("run_claim")

    async def run_renew_claim(self, run_id: str, *args: Any, **kwargs: Any) -> NoReturn:
        _unsupported("run_renew_claim")

    async def run_release_claim(self, run_id: str, *args: Any, **kwargs: Any) -> NoReturn:
        _unsupported("run_release_claim")

    async def run_stats(self, *args: Any, **kwargs: Any) -> NoReturn:
        _unsupported("run_stats")

    async def runtime_stats(self) -> NoReturn:
        _unsupported("runtime_stats")

    async def runner_stats(self, *args: Any, **kwargs: Any) -> NoReturn:
        _unsupported("runner_stats")
