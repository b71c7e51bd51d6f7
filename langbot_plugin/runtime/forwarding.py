"""Serving a plugin's calls: registration aside, every action is forwarded to the host.

One table (:data:`langbot_plugin.protocol.host_link.FORWARDED`) drives every route. A
forwarded call never carries what the plugin claims about itself: scope fields and
``caller_plugin_identity`` are stripped from the payload, the identity is set from the
connection, and the envelope context is the plugin's own binding.

The runtime is a relay here: payloads and answers pass unparsed (the plugin's proxy
validates what the host answers, the host what the plugin sends); only the spec's
name, wait and file keys are used.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from langbot_plugin.protocol.host_api import messaging
from langbot_plugin.protocol.host_link import FORWARDED, SCOPE_FIELDS, Forward, Owner
from langbot_plugin.protocol.run_audit import (
    REPORT_RUN_AUDIT,
    ReportRunAuditParams,
    ReportRunAuditResult,
)
from langbot_plugin.protocol.spec import ActionTable
from langbot_plugin.rpc import NotReadyError, RequestContext, Route
from langbot_plugin.rpc.log_context import note
from langbot_plugin.rpc.tracing import trace_table
from langbot_plugin.runtime.plugins import PluginHandle, PluginRegistry
from langbot_plugin.runtime.state import RuntimeState

__all__ = [
    "HandleSource",
    "add_forwarding",
    "add_local_answers",
    "add_run_audit_reports",
    "plugin_table",
    "prepare_payload",
]

#: Returns the handle of the plugin a request on this connection comes from (raises
#: before registration). A shared worker's connection picks it by the request's context.
HandleSource = Callable[[RequestContext], PluginHandle]


def prepare_payload(
    row: Forward, handle: PluginHandle, data: dict[str, Any]
) -> tuple[dict[str, Any], float | None]:
    """The payload the host receives, and the time to wait for it."""
    payload = {key: value for key, value in data.items() if key not in SCOPE_FIELDS}
    timeout = row.spec.requested_wait(payload.pop("timeout", None))
    payload["caller_plugin_identity"] = handle.identity
    if row.owner is Owner.PLUGIN:
        payload["owner_type"], payload["owner"] = "plugin", handle.identity
    elif row.owner is Owner.WORKSPACE:
        if handle.workspace.workspace_uuid is None:
            raise NotReadyError("workspace storage needs a plugin bound to a workspace")
        payload["owner_type"], payload["owner"] = "workspace", handle.workspace.workspace_uuid
    return payload, timeout


def _unary(row: Forward, current: HandleSource, state: RuntimeState) -> Route:
    files = row.spec.files

    async def forward(ctx: RequestContext) -> dict[str, Any]:
        handle = current(ctx)
        note(plugin=handle.identity)
        state.live_runs.authorize(row.action, ctx.data, handle.identity)
        payload, timeout = prepare_payload(row, handle, ctx.data)
        host = state.upstream.current()
        result = await row.host_spec.relay(
            host, payload, context=handle.host_context(), timeout=timeout
        )
        for key in files:
            if isinstance(result.get(key), str):
                result[key] = await ctx.session.send_file(host.files.take(result[key]))
        return result

    return Route(forward)


def _stream(row: Forward, current: HandleSource, state: RuntimeState) -> Route:
    async def forward(ctx: RequestContext) -> AsyncIterator[dict[str, Any]]:
        handle = current(ctx)
        note(plugin=handle.identity)
        state.live_runs.authorize(row.action, ctx.data, handle.identity)
        payload, timeout = prepare_payload(row, handle, ctx.data)
        host = state.upstream.current()
        async with row.host_spec.relay_stream(
            host, payload, context=handle.host_context(), timeout=timeout
        ) as items:
            async for item in items:
                yield item

    return Route(forward, stream=True)


def add_forwarding(table: ActionTable, current: HandleSource, state: RuntimeState) -> None:
    """A route for every forwarded action, bound to one plugin connection."""
    for row in FORWARDED.values():
        table.add_route(row.spec, (_stream if row.spec.stream else _unary)(row, current, state))


def add_local_answers(table: ActionTable, current: HandleSource, registry: PluginRegistry) -> None:
    """Plugin calls the runtime answers itself, within the plugin's workspace."""

    def peers(ctx: RequestContext) -> list[PluginHandle]:
        return registry.in_scope(current(ctx).workspace, ready_only=True)

    async def list_commands(_: object, ctx: RequestContext) -> messaging.CommandList:
        dumps = [c.model_dump() for h in peers(ctx) for c in h.components("Command")]
        return messaging.CommandList(commands=dumps)

    async def list_tools(_: object, ctx: RequestContext) -> messaging.ToolList:
        return messaging.ToolList(
            tools=[c.model_dump() for h in peers(ctx) for c in h.components("Tool")]
        )

    async def list_plugins_manifest(_: object, ctx: RequestContext) -> messaging.PluginManifests:
        manifests = [h.container.manifest.model_dump() for h in peers(ctx)]
        return messaging.PluginManifests(plugins=manifests)

    table.add(messaging.LIST_COMMANDS, list_commands)
    table.add(messaging.LIST_TOOLS, list_tools)
    table.add(messaging.LIST_PLUGINS_MANIFEST, list_plugins_manifest)


def add_run_audit_reports(table: ActionTable, current: HandleSource, state: RuntimeState) -> None:
    """The SDK's refusals for one of the caller's runs, kept in the run's audit."""

    async def report(p: ReportRunAuditParams, ctx: RequestContext) -> ReportRunAuditResult:
        identity = current(ctx).identity
        accepted = state.live_runs.audit.reported(p.run_id, identity, p.entries, p.dropped)
        return ReportRunAuditResult(accepted=accepted)

    table.add(REPORT_RUN_AUDIT, report)


def plugin_table(current: HandleSource, state: RuntimeState) -> ActionTable:
    """Everything a registered plugin may call on the runtime (registration aside)."""
    table = ActionTable()
    add_forwarding(table, current, state)
    add_local_answers(table, current, state.registry)
    add_run_audit_reports(table, current, state)
    state.metrics.requests.put_on(table, "plugin")
    trace_table(table, "plugin")
    return table
