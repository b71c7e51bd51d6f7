"""Agent runners: the component that answers a conversation turn (or an event).

A runner gets an :class:`AgentRunContext`, yields :class:`AgentRunResult` items and
talks to LangBot through the run-scoped API (:meth:`AgentRunner.get_run_api`,
``ctx.api``); the contract is ``docs/agent-runner.md``.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from langbot_plugin.api.definition.components.base import BaseComponent, BasePlugin
from langbot_plugin.api.entities._lazy import lazy_names
from langbot_plugin.api.proxies.invocation import current_config

if TYPE_CHECKING:
    from langbot_plugin.api.agent_tools.mcp_bridge import AgentRunMCPBridge
    from langbot_plugin.api.entities.builtin.agent_runner.context import AgentRunContext
    from langbot_plugin.api.entities.builtin.agent_runner.manifest_v1 import (
        ProtocolV1Capabilities,
        ProtocolV1Permissions,
    )
    from langbot_plugin.api.entities.builtin.agent_runner.result import AgentRunResult
    from langbot_plugin.api.entities.builtin.platform.events import EBAEvent
    from langbot_plugin.api.proxies.agent_run import AgentRunAPIProxy

__all__ = ["AgentRunContext", "AgentRunResult", "AgentRunner", "EventHandler"]

#: A typed event callback of a runner: ``async def on_message(ctx) -> None``.
EventHandler = Callable[["AgentRunContext"], Awaitable[None]]
H = TypeVar("H", bound=EventHandler)


# The run models are imported when first asked for, not when a plugin loads.
__getattr__ = lazy_names(
    __name__,
    {
        "langbot_plugin.api.entities.builtin.agent_runner.context": "AgentRunContext",
        "langbot_plugin.api.entities.builtin.agent_runner.result": "AgentRunResult",
    },
)


class AgentRunner(BaseComponent):
    """Implement :meth:`run` as an async generator."""

    __kind__ = "AgentRunner"

    #: The plugin object, as for every component (the worker sets it; ``None`` before).
    plugin: BasePlugin = None  # pyright: ignore[reportAssignmentType]
    _plugin_runtime_handler: Any = None
    _plugin_config: dict[str, Any] = {}
    _plugin_identity: str | None = None

    def __init__(self) -> None:
        super().__init__()
        self._plugin_runtime_handler = None
        self._plugin_config = {}
        self._plugin_identity = None
        #: Event callbacks by platform event class (see :meth:`handler`).
        self.registered_handlers: dict[type[EBAEvent], list[EventHandler]] = {}

    def bind_runtime(
        self,
        *,
        plugin_runtime_handler: Any,
        plugin_config: dict[str, Any] | None = None,
        plugin_identity: str | None = None,
    ) -> None:
        """Called by the worker before ``initialize``."""
        self._plugin_runtime_handler = plugin_runtime_handler
        self._plugin_config = dict(plugin_config or {})
        self._plugin_identity = plugin_identity

    def _handler(self) -> Any:
        return self._plugin_runtime_handler

    def get_plugin_config(self) -> dict[str, Any]:
        """The plugin's settings (the current invocation's, in a shared runtime)."""
        scoped = current_config(self._plugin_runtime_handler)
        return dict(scoped) if scoped is not None else dict(self._plugin_config)

    @property
    def plugin_identity(self) -> str | None:
        """``author/name`` of the plugin this runner belongs to."""
        return self._plugin_identity

    def get_run_api(self, ctx: AgentRunContext) -> AgentRunAPIProxy:
        """The host API for this run, limited to what the run was granted."""
        from langbot_plugin.api.proxies.agent_run import AgentRunAPIProxy

        if self._plugin_runtime_handler is None:
            raise RuntimeError("this runner is not connected to a runtime yet")
        return AgentRunAPIProxy(ctx=ctx, plugin_runtime_handler=self._plugin_runtime_handler)

    def create_external_mcp_bridge(self, ctx: AgentRunContext) -> AgentRunMCPBridge:
        """A per-run MCP bridge over this run's API for an external harness (Protocol
        v1): ``async with self.create_external_mcp_bridge(ctx) as bridge: ...``."""
        from langbot_plugin.api.agent_tools.mcp_bridge import AgentRunMCPBridge

        return AgentRunMCPBridge.from_run_api(self.get_run_api(ctx), ctx)

    @classmethod
    def get_config_schema(cls) -> list[dict[str, Any]]:
        """Config form items, used when the manifest's ``spec.config`` is empty."""
        return []

    @classmethod
    def get_capabilities(cls) -> ProtocolV1Capabilities:
        """Capabilities (Protocol v1), used when the manifest declares no
        ``spec.capabilities``; the defaults declare nothing."""
        from langbot_plugin.api.entities.builtin.agent_runner.manifest_v1 import (
            ProtocolV1Capabilities,
        )

        return ProtocolV1Capabilities()

    @classmethod
    def get_permissions(cls) -> ProtocolV1Permissions:
        """Permissions (Protocol v1), used when the manifest declares no
        ``spec.permissions``; the defaults ask for nothing."""
        from langbot_plugin.api.entities.builtin.agent_runner.manifest_v1 import (
            ProtocolV1Permissions,
        )

        return ProtocolV1Permissions()

    def handler(self, event_type: type[EBAEvent]) -> Callable[[H], H]:
        """Register a callback for a platform event class (call it in ``initialize``)::

            @self.handler(MessageReceived)
            async def on_message(ctx): await ctx.reply("hi")

        The default :meth:`run` of :class:`Runner` calls the callbacks of the event's
        class (or of ``EBAEvent``, the catch-all). The manifest declares the events."""
        from langbot_plugin.api.entities.builtin.platform.events import EBAEvent

        if not isinstance(event_type, type) or not issubclass(event_type, EBAEvent):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError("runner handlers take a platform event class (an EBAEvent)")

        def register(callback: H) -> H:
            self.registered_handlers.setdefault(event_type, []).append(callback)
            return callback

        return register

    async def dispatch_event(self, ctx: AgentRunContext) -> None:
        """Call the registered callbacks of ``ctx.platform_event``'s class."""
        from langbot_plugin.api.entities.builtin.platform.events import EBAEvent

        try:
            event = ctx.platform_event
        except ValueError as exc:
            raise ValueError(
                f"this run's event ({ctx.event.event_type}) is not an event-based platform "
                f"event ({exc}); callbacks registered with handler() answer those, so "
                "override run(ctx) to answer chat messages"
            ) from None
        callbacks = self.registered_handlers.get(type(event)) or self.registered_handlers.get(
            EBAEvent
        )
        if not callbacks:
            raise ValueError(f"No handler registered for {ctx.event.event_type}")
        for callback in callbacks:
            await callback(ctx)

    def invoke(self, ctx: AgentRunContext) -> AsyncGenerator[AgentRunResult]:
        """Run :meth:`run` for one invocation: ``ctx`` bound to the traced run API (so
        ``ctx.reply``, ``ctx.log``, ``ctx.state_get``... work), the invocation bound
        task-locally, and the results of both (``run``'s and the context's) in order.
        ``run`` may be an async generator or a coroutine. The worker calls this."""
        from langbot_plugin.api.definition.components.agent_runner.invoke import invoke_runner

        return invoke_runner(self, ctx)

    @abstractmethod
    def run(self, ctx: AgentRunContext) -> Any:
        """Handle one run: an async generator of results, or a coroutine that uses
        ``ctx`` (replies, logs) and returns ``None``."""
