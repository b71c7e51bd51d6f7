"""The host's control connection: the handshake gate and the host -> runtime actions.

Until ``set_runtime_config`` arrives on a connection, every other action on it is
answered with ``not_ready`` (the session itself answers ``__ping``). Requests are
scoped by their envelope context (see :mod:`langbot_plugin.runtime.plugins`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from langbot_plugin.protocol import control_link as host
from langbot_plugin.protocol.run_audit import GET_RUN_AUDIT, GetRunAuditParams, RunAudit
from langbot_plugin.protocol.runners import RunResultItem
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.protocol.spec import ActionTable, Empty, Relayed
from langbot_plugin.rpc import NotReadyError, RequestContext, Route, RPCSession
from langbot_plugin.rpc.routes import before
from langbot_plugin.rpc.tracing import trace_table
from langbot_plugin.runtime.dispatch import (
    call_tool,
    emit_event,
    execute_command,
    list_runners,
    run_runner,
)
from langbot_plugin.runtime.installations import Installations
from langbot_plugin.runtime.legacy import add_legacy
from langbot_plugin.runtime.state import RuntimeState
from langbot_plugin.runtime.targeted import add_listings, add_targeted
from langbot_plugin.runtime.workers import RestartPolicy

__all__ = ["ControlConnection"]

logger = logging.getLogger("langbot_plugin.runtime.control")


def _scope(ctx: RequestContext) -> ActionScope:
    return ActionScope.from_context(ctx.context)


class ControlConnection:
    """The dispatcher of one host control connection."""

    def __init__(self, state: RuntimeState, installations: Installations) -> None:
        self.state = state
        self.installations = installations
        self.configured = False
        self.table = ActionTable()
        self._register()
        # Until the handshake every other action is refused; after it, no route carries
        # the check any more (``when`` is read when a route is composed).
        handshake = frozenset(host.SET_RUNTIME_CONFIG.names)
        self.table.use(
            before(self._require_config),
            when=lambda a: not self.configured and a not in handshake,
        )
        # outermost: the refusals above are counted too
        state.metrics.requests.put_on(self.table, "control")
        trace_table(self.table, "control")

    def resolve(self, action: str) -> Route | None:
        return self.table.resolve(action)

    def _require_config(self, ctx: RequestContext) -> None:
        if not self.configured:
            raise NotReadyError(f"{ctx.request.action} refused: set_runtime_config must come first")

    def closed(self, session: RPCSession) -> None:
        self.state.upstream.detach(session)

    # ----------------------------------------------------------------- handlers

    def _register(self) -> None:
        t = self.table
        t.add(host.SET_RUNTIME_CONFIG, self.set_runtime_config)
        t.add(host.LIST_PLUGINS, self.list_plugins)
        t.add(host.GET_PLUGIN_INFO, self.get_plugin_info)
        t.add(host.RECONCILE_PLUGIN_INSTALLATIONS, self.reconcile)
        t.add(host.APPLY_PLUGIN_INSTALLATION, self.apply_installation)
        t.add(host.REMOVE_PLUGIN_INSTALLATION, self.remove_installation)
        t.add(host.GET_DEBUG_INFO, self.get_debug_info)
        t.add(host.LIST_RUNNERS, self.list_runners)
        t.add(host.RUN_RUNNER, self.run_runner)
        t.add(host.LIST_COMMANDS, self.list_commands)
        t.add(host.EXECUTE_COMMAND, self.execute_command)
        t.add(host.LIST_TOOLS, self.list_tools)
        t.add(host.CALL_TOOL, self.call_tool)
        t.add(host.EMIT_EVENT, self.emit_event)
        t.add(host.GET_PLUGIN_LOGS, self.get_plugin_logs)
        t.add(GET_RUN_AUDIT, self.get_run_audit)
        add_targeted(t, self.state)
        add_listings(t, self.state)
        add_legacy(t, self.state, self.installations)

    async def set_runtime_config(self, params: host.RuntimeConfig, ctx: RequestContext) -> Empty:
        self.configured = True
        self.table.recompose()
        self.state.upstream.attach(ctx.session, params)
        policy = RestartPolicy.from_worker_policy(params.worker_policy)
        self.installations.supervisor.policy = self.installations.shared.policy = policy
        logger.info(
            "host connected (profile %s, instance %s)",
            params.runtime_profile,
            params.runtime_identity.instance_uuid,
        )
        return Empty()

    async def list_plugins(
        self, params: host.ScopedListParams, ctx: RequestContext
    ) -> host.PluginsResult:
        handles = self.state.registry.in_scope(_scope(ctx), params.include_plugins)
        return host.PluginsResult(plugins=[h.describe() for h in handles])

    async def get_plugin_info(
        self, params: host.PluginRef, ctx: RequestContext
    ) -> host.PluginInfoResult:
        handle = self.state.registry.find(params.plugin_identity, _scope(ctx))
        return host.PluginInfoResult(plugin=handle.describe() if handle is not None else None)

    async def reconcile(
        self, params: host.ReconcileParams, ctx: RequestContext
    ) -> host.ReconcileResult:
        return await self.installations.reconcile(params.installations)

    async def apply_installation(
        self, params: host.ApplyInstallationParams, ctx: RequestContext
    ) -> host.ApplyInstallationResult:
        scope = _scope(ctx)
        uuid = scope.installation_uuid
        if uuid is None:
            raise NotReadyError("apply_plugin_installation needs an installation binding context")
        key = params.artifact_file_key
        content = ctx.session.files.take(key) if key is not None else None
        handle = self.state.registry.by_installation(uuid)
        if content is None and handle is not None and handle.debug:
            handle.container.enabled = params.enabled
            return host.ApplyInstallationResult(
                installation_uuid=uuid, state="running" if params.enabled else "disabled"
            )
        return await self.installations.apply(
            scope, enabled=params.enabled, content=content, execution_mode=params.execution_mode
        )

    async def remove_installation(self, params: Empty, ctx: RequestContext) -> Empty:
        uuid = _scope(ctx).installation_uuid
        if uuid is None:
            return Empty()
        handle = self.state.registry.by_installation(uuid)
        if handle is not None and handle.debug:
            await self.state.retire(handle)
        else:
            await self.installations.remove(uuid)
        return Empty()

    async def get_plugin_logs(
        self, params: host.PluginLogsParams, ctx: RequestContext
    ) -> host.PluginLogs:
        logs = self.installations.logs_for(params.plugin_identity)
        lines = logs.tail(params.limit, params.level) if logs is not None else []
        return host.PluginLogs(logs=[line.to_wire() for line in lines])

    async def get_run_audit(self, params: GetRunAuditParams, ctx: RequestContext) -> RunAudit:
        """The refusals the runtime and the SDK made for a run (the host never saw them);
        a run of another workspace than the request's reads as unknown."""
        return self.state.live_runs.audit.read(params.run_id, _scope(ctx))

    async def get_debug_info(self, params: Empty, ctx: RequestContext) -> host.DebugInfo:
        key = self.state.debug_keys.issue(_scope(ctx))
        return host.DebugInfo(
            plugin_debug_key=key.key,
            expires_at=key.expires_at_iso,
            ws_debug_port=self.state.options.debug_port,
        )

    async def list_runners(
        self, params: host.ScopedListParams, ctx: RequestContext
    ) -> host.RunnersResult:
        runners = list_runners(self.state.registry, _scope(ctx), params.include_plugins)
        return host.RunnersResult(runners=runners)

    def run_runner(
        self, params: host.HostRunRunnerParams, ctx: RequestContext
    ) -> AsyncIterator[RunResultItem]:
        return run_runner(self.state.registry, self.state.live_runs, _scope(ctx), params)

    async def list_commands(
        self, params: host.ScopedListParams, ctx: RequestContext
    ) -> host.CommandsResult:
        handles = self.state.registry.in_scope(_scope(ctx), params.include_plugins, ready_only=True)
        return host.CommandsResult(commands=[c for h in handles for c in h.components("Command")])

    def execute_command(
        self, params: host.HostExecuteCommandParams, ctx: RequestContext
    ) -> AsyncIterator[host.CommandReturnItem]:
        return execute_command(self.state.registry, _scope(ctx), params)

    async def list_tools(
        self, params: host.ScopedListParams, ctx: RequestContext
    ) -> host.ToolsResult:
        handles = self.state.registry.in_scope(_scope(ctx), params.include_plugins, ready_only=True)
        return host.ToolsResult(tools=[c for h in handles for c in h.components("Tool")])

    async def call_tool(self, params: host.HostCallToolParams, ctx: RequestContext) -> Relayed:
        return await call_tool(self.state.registry, _scope(ctx), params)

    async def emit_event(
        self, params: host.HostEmitEventParams, ctx: RequestContext
    ) -> host.HostEmitEventResult:
        return await emit_event(self.state.registry, _scope(ctx), params)
