"""Agent runners: the component that answers a conversation turn (or an event).

A runner gets an :class:`AgentRunContext` and yields :class:`AgentRunResult` items:
``message.delta`` while it streams (each carrying the *cumulative* text so far),
then ``message.completed`` and/or ``run.completed``, or ``run.failed``. It talks to
LangBot only through the run-scoped API from :meth:`AgentRunner.get_run_api`, which
enforces what the run was granted.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any, NoReturn

from langbot_plugin.api.definition.components.base import BaseComponent

if TYPE_CHECKING:
    from langbot_plugin.api.entities.builtin.agent_runner import AgentRunContext, AgentRunResult
    from langbot_plugin.api.proxies.agent_run import AgentRunAPIProxy

__all__ = ["AgentRunner"]


class AgentRunner(BaseComponent):
    """Implement :meth:`run` as an async generator."""

    __kind__ = "AgentRunner"

    _plugin_runtime_handler: Any = None
    _plugin_config: dict[str, Any] = {}
    _plugin_identity: str | None = None
    _permissions: dict[str, Any] | None = None

    def __init__(self) -> None:
        super().__init__()
        self._plugin_runtime_handler = None
        self._plugin_config = {}
        self._plugin_identity = None
        self._permissions = None

    @property
    def plugin(self) -> NoReturn:  # type: ignore[override]
        raise RuntimeError(
            "agent runners do not get the plugin object; use get_run_api(ctx) for host "
            "calls and get_plugin_config() for settings"
        )

    def bind_runtime(
        self,
        *,
        plugin_runtime_handler: Any,
        plugin_config: dict[str, Any] | None = None,
        plugin_identity: str | None = None,
        permissions: dict[str, Any] | None = None,
    ) -> None:
        """Called by the worker before ``initialize``.

        ``permissions`` is the manifest's ``spec.permissions``: what a granted resource
        without an explicit ``operations`` list may be used for.
        """
        self._plugin_runtime_handler = plugin_runtime_handler
        self._plugin_config = dict(plugin_config or {})
        self._plugin_identity = plugin_identity
        self._permissions = dict(permissions) if permissions else None

    def get_plugin_config(self) -> dict[str, Any]:
        return dict(self._plugin_config)

    @property
    def plugin_identity(self) -> str | None:
        """``author/name`` of the plugin this runner belongs to."""
        return self._plugin_identity

    def get_run_api(self, ctx: AgentRunContext) -> AgentRunAPIProxy:
        """The host API for this run, limited to what the run was granted."""
        from langbot_plugin.api.proxies.agent_run import AgentRunAPIProxy

        if self._plugin_runtime_handler is None:
            raise RuntimeError("this runner is not connected to a runtime yet")
        return AgentRunAPIProxy(
            ctx=ctx,
            plugin_runtime_handler=self._plugin_runtime_handler,
            permissions=self._permissions,
        )

    @classmethod
    def get_config_schema(cls) -> list[dict[str, Any]]:
        """Config form items, used when the manifest's ``spec.config`` is empty."""
        return []

    @abstractmethod
    def run(self, ctx: AgentRunContext) -> AsyncGenerator[AgentRunResult]:
        """Handle one run; yield results."""
