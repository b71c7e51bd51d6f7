"""Serving a plugin's calls: registration aside, every action is forwarded to the host.

One table (:data:`langbot_plugin.protocol.host_link.FORWARDED`) drives every route. A
forwarded call never carries what the plugin claims about itself: scope fields and
``caller_plugin_identity`` are stripped from the payload, the identity is set from the
connection, and the envelope context is the plugin's own binding.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from langbot_plugin.protocol.host_link import FORWARDED, SCOPE_FIELDS, Forward, Owner
from langbot_plugin.rpc import NotReadyError, RequestContext, Route, RouteTable
from langbot_plugin.runtime.plugins import PluginHandle, PluginRegistry
from langbot_plugin.runtime.state import RuntimeState

__all__ = ["HandleSource", "forwarding_routes", "local_routes", "prepare_payload"]

#: Returns the handle of the plugin on this connection (raises before registration).
HandleSource = Callable[[], PluginHandle]


def prepare_payload(
    row: Forward, handle: PluginHandle, data: dict[str, Any]
) -> tuple[dict[str, Any], float]:
    """The payload the host receives, and the timeout to wait for it."""
    payload = {key: value for key, value in data.items() if key not in SCOPE_FIELDS}
    timeout = row.timeout
    requested = payload.pop("timeout", None)
    if isinstance(requested, int | float) and not isinstance(requested, bool) and requested > 0:
        timeout = min(float(requested), row.max_timeout)
    payload["caller_plugin_identity"] = handle.identity
    if row.owner is Owner.PLUGIN:
        payload["owner_type"], payload["owner"] = "plugin", handle.identity
    elif row.owner is Owner.WORKSPACE:
        if handle.workspace.workspace_uuid is None:
            raise NotReadyError("workspace storage needs a plugin bound to a workspace")
        payload["owner_type"], payload["owner"] = "workspace", handle.workspace.workspace_uuid
    return payload, timeout


def _unary(row: Forward, current: HandleSource, state: RuntimeState) -> Route:
    async def forward(ctx: RequestContext) -> dict[str, Any]:
        handle = current()
        state.live_runs.authorize(row.action, ctx.data, handle.identity)
        payload, timeout = prepare_payload(row, handle, ctx.data)
        host = state.upstream.current()
        result = await host.call(
            row.target, payload, context=handle.host_context(), timeout=timeout
        )
        if row.file_key is not None and isinstance(result.get(row.file_key), str):
            content = host.files.take(result[row.file_key])
            result[row.file_key] = await ctx.session.send_file(content)
        return result

    return Route(forward)


def _stream(row: Forward, current: HandleSource, state: RuntimeState) -> Route:
    async def forward(ctx: RequestContext) -> AsyncIterator[dict[str, Any]]:
        handle = current()
        state.live_runs.authorize(row.action, ctx.data, handle.identity)
        payload, timeout = prepare_payload(row, handle, ctx.data)
        host = state.upstream.current()
        async with host.stream(
            row.target, payload, context=handle.host_context(), timeout=timeout
        ) as items:
            async for item in items:
                yield item

    return Route(forward, stream=True)


def forwarding_routes(current: HandleSource, state: RuntimeState) -> dict[str, Route]:
    """A route for every forwarded action, bound to one plugin connection."""
    return {
        name: (_stream if row.stream else _unary)(row, current, state)
        for name, row in FORWARDED.items()
    }


def local_routes(current: HandleSource, registry: PluginRegistry) -> dict[str, Route]:
    """Plugin calls the runtime answers itself, within the plugin's workspace."""

    def peers() -> list[PluginHandle]:
        return registry.in_scope(current().workspace, ready_only=True)

    async def list_commands(_: RequestContext) -> dict[str, Any]:
        dumps = [c.model_dump() for h in peers() for c in h.components("Command")]
        return {"commands": dumps}

    async def list_tools(_: RequestContext) -> dict[str, Any]:
        return {"tools": [c.model_dump() for h in peers() for c in h.components("Tool")]}

    async def list_plugins_manifest(_: RequestContext) -> dict[str, Any]:
        return {"plugins": [h.container.manifest.model_dump() for h in peers()]}

    return {
        "list_commands": Route(list_commands),
        "list_tools": Route(list_tools),
        "list_plugins_manifest": Route(list_plugins_manifest),
    }


def plugin_routes(current: HandleSource, state: RuntimeState) -> RouteTable:
    """Everything a registered plugin may call on the runtime."""
    return RouteTable(**forwarding_routes(current, state), **local_routes(current, state.registry))
