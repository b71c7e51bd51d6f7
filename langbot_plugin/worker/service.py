"""The runtime -> plugin actions a worker serves, over its loaded plugin."""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
from collections.abc import AsyncIterator
from typing import Any

from langbot_plugin.api.proxies.channel import Channel
from langbot_plugin.protocol import plugin_link as plug
from langbot_plugin.protocol.containers import PluginContainer
from langbot_plugin.protocol.runners import RunResultItem
from langbot_plugin.protocol.spec import ActionTable, Empty
from langbot_plugin.rpc import (
    InvalidParamsError,
    NotFoundError,
    NotReadyError,
    RequestContext,
    Route,
)
from langbot_plugin.rpc.tracing import trace_table
from langbot_plugin.worker.author_trace import reported, reporting
from langbot_plugin.worker.loader import LoadedPlugin
from langbot_plugin.worker.runs import run_agent

__all__ = ["PluginService"]

logger = logging.getLogger("langbot_plugin.worker")


class PluginService:
    """Builds the action table for one loaded plugin.

    ``channel`` is what the plugin's API talks to the host through; by default the
    session a request arrived on (a shared worker gives each slot its own scoped view).
    """

    def __init__(self, loaded: LoadedPlugin, channel: Channel | None = None) -> None:
        self.loaded = loaded
        self.channel = channel
        self.stopping = False
        self.table = ActionTable()
        t = self.table
        t.add(plug.INITIALIZE_PLUGIN, self.initialize_plugin)
        t.add(plug.GET_PLUGIN_CONTAINER, self.get_plugin_container)
        t.add(plug.RUN_RUNNER, self.run_runner)
        t.add(plug.EXECUTE_COMMAND, self.execute_command)
        t.add(plug.CALL_TOOL, self.call_tool)
        t.add(plug.EMIT_EVENT, self.emit_event)
        t.add(plug.SHUTDOWN, self.shutdown)
        # The calls into files, pages, knowledge engines and parsers are registered on the
        # first request the core table does not know, so a plugin does not import their
        # models before it is asked for them.
        t.defer(self._add_components)
        t.use(reporting(loaded.root))  # a unary call that fails in the plugin says where
        trace_table(t, "runtime")

    def resolve(self, action: str) -> Route | None:
        return self.table.resolve(action)

    def _add_components(self, table: ActionTable) -> None:
        from langbot_plugin.worker.components import add_components

        add_components(table, self.loaded)

    def _channel(self, ctx: RequestContext) -> Channel:
        return self.channel if self.channel is not None else ctx.session

    def _require_initialized(self) -> None:
        if self.loaded.status != "initialized":
            raise NotReadyError(f"plugin {self.loaded.identity} is not initialized yet")

    async def initialize_plugin(
        self, params: plug.InitializePluginParams, ctx: RequestContext
    ) -> Empty:
        if self.loaded.status == "initialized":
            self.loaded.reset()  # a second initialize: new instances of the same code
        await self.loaded.initialize(params.plugin_settings, self._channel(ctx))
        logger.info("plugin %s initialized", self.loaded.identity)
        return Empty()

    async def get_plugin_container(self, params: Empty, ctx: RequestContext) -> PluginContainer:
        return self.loaded.container()

    def run_runner(
        self, params: plug.RunRunnerParams, ctx: RequestContext
    ) -> AsyncIterator[RunResultItem]:
        self._require_initialized()
        return run_agent(self.loaded, params.runner_name, params.context, self._channel(ctx))

    async def execute_command(
        self, params: plug.ExecuteCommandParams, ctx: RequestContext
    ) -> AsyncIterator[plug.CommandReply]:
        from langbot_plugin.api.definition.components import Command
        from langbot_plugin.api.proxies.execute_context import ExecuteContextProxy

        self._require_initialized()
        context = ExecuteContextProxy.model_validate(
            {**params.command_context, "plugin_runtime_handler": self._channel(ctx)}
        )
        component = self.loaded.find(("Command",), context.command)
        if component is None or not isinstance(component.instance, Command):
            raise NotFoundError(f"no command {context.command!r} in {self.loaded.identity}")
        execute = component.instance._execute(context)  # pyright: ignore[reportPrivateUsage]
        async with contextlib.aclosing(execute) as replies:
            while True:
                with reported(self.loaded.root):
                    try:
                        reply = await anext(replies)
                    except StopAsyncIteration:
                        break
                yield plug.CommandReply(command_response=reply.model_dump(mode="json"))

    async def call_tool(
        self, params: plug.CallToolParams, ctx: RequestContext
    ) -> plug.CallToolResult:
        from langbot_plugin.api.definition.components import Tool

        self._require_initialized()
        component = self.loaded.find((Tool.__kind__,), params.tool_name)
        if component is None or not isinstance(component.instance, Tool):
            raise NotFoundError(f"no tool {params.tool_name!r} in {self.loaded.identity}")
        tool = component.instance
        accepted = _parameters_of(type(tool))
        if "session" in accepted and "query_id" in accepted:
            kwargs: dict[str, Any] = {
                "session": _session_for(tool, params.session),
                "query_id": params.query_id if params.query_id is not None else 0,
            }
            if "query_uuid" in accepted:
                kwargs["query_uuid"] = params.query_uuid
            result = await tool.call(params.tool_parameters, **kwargs)
        else:
            result = await tool.call(params.tool_parameters)  # type: ignore[call-arg]
        return plug.CallToolResult(tool_response=result)

    async def emit_event(
        self, params: plug.EmitEventParams, ctx: RequestContext
    ) -> plug.EmitEventResult:
        from langbot_plugin.api.definition.components import EventListener
        from langbot_plugin.api.proxies.event_context import EventContextProxy

        self._require_initialized()
        event_context = EventContextProxy.model_validate(
            {**params.event_context, "plugin_runtime_handler": self._channel(ctx)}
        )
        emitted = False
        for component in self.loaded.of_kind(EventListener.__kind__):
            listener = component.instance
            if not isinstance(listener, EventListener):
                continue
            for handler in listener.handlers_for(type(event_context.event)):
                emitted = True
                await handler(event_context)
                if event_context.is_prevent_postorder:
                    break
            if event_context.is_prevent_postorder:
                break
        return plug.EmitEventResult(
            emitted=emitted, event_context=event_context.model_dump(mode="json")
        )

    async def shutdown(self, params: Empty, ctx: RequestContext) -> Empty:
        """The runtime is about to close this link; nothing is accepted afterwards."""
        self.stopping = True
        logger.info("plugin %s: runtime asked to shut down", self.loaded.identity)
        return Empty()


def _session_for(tool: Any, raw: dict[str, Any] | None) -> Any:
    """The call's ``session`` as the entity a ``call(params, session, query_id)`` expects.

    A call without a usable session is refused in one line (``invalid_params``), not
    with pydantic's multi-line dump.
    """
    from pydantic import ValidationError

    from langbot_plugin.api.entities.builtin.provider.session import Session

    try:
        return Session.model_validate(raw or {})
    except ValidationError as exc:
        missing = ", ".join(
            "session." + ".".join(str(part) for part in error["loc"]) for error in exc.errors()
        )
        raise InvalidParamsError(
            f"{type(tool).__name__}.call(params, session, query_id) needs the conversation's "
            f"session; this call_tool has none usable (missing or invalid: {missing})"
        ) from None


@functools.cache
def _parameters_of(tool_class: type[Any]) -> frozenset[str]:
    """The parameter names of a Tool class's ``call`` (read once per class)."""
    return frozenset(inspect.signature(tool_class.call).parameters)
