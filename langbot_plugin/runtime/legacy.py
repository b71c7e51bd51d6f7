"""The lifecycle actions of older hosts: install, upgrade, delete and restart by name.

The 4.11 host still sends ``delete_plugin`` and ``restart_plugin`` for debug plugins
(under the bridge scope); 0.5 hosts also install packages with ``install_plugin``.
Each action streams ``{"current_action": ...}`` progress items.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from langbot_plugin.protocol.host_link import GET_PLUGIN_SETTINGS
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.rpc import (
    InvalidParamsError,
    NotSupportedError,
    RequestContext,
    Route,
    RPCError,
)
from langbot_plugin.runtime.installations import Installations
from langbot_plugin.runtime.link import initialize
from langbot_plugin.runtime.state import RuntimeState

__all__ = ["legacy_routes"]


class InstallFailedError(RPCError):
    code = "install_failed"


def legacy_routes(state: RuntimeState, installations: Installations) -> dict[str, Route]:
    def find(ctx: RequestContext) -> Any:
        identity = f"{ctx.data.get('plugin_author')}/{ctx.data.get('plugin_name')}"
        return identity, state.registry.find(identity, ActionScope.from_context(ctx.context))

    async def delete_plugin(ctx: RequestContext) -> AsyncIterator[dict[str, Any]]:
        identity, handle = find(ctx)
        if handle is None:
            yield {"current_action": f"{identity} is not running; nothing to remove"}
            return
        yield {"current_action": f"removing {identity}"}
        if handle.debug:
            await state.retire(handle)
        else:
            await installations.remove(handle.binding.installation_uuid or "")
        yield {"current_action": "plugin removed"}

    async def restart_plugin(ctx: RequestContext) -> AsyncIterator[dict[str, Any]]:
        identity, handle = find(ctx)
        if handle is None:
            yield {"current_action": f"{identity} is not running; nothing to restart"}
            return
        yield {"current_action": f"restarting {identity}"}
        if handle.debug:
            who = {"plugin_author": handle.author, "plugin_name": handle.name}
            context = handle.workspace.workspace_context() or None
            handle.settings = await GET_PLUGIN_SETTINGS.call(
                state.upstream.current(), who, context=context
            )
            await initialize(handle)
        else:
            uuid = handle.binding.installation_uuid or ""
            record = installations.records.get(uuid)
            if record is None:
                raise InstallFailedError(f"no installation record for {identity}")
            result = await installations.apply(
                ActionScope.model_validate(record.binding), enabled=True, content=None
            )
            if result.state == "failed":
                raise InstallFailedError(result.message or "restart failed")
        yield {"current_action": "plugin restarted"}

    async def install_plugin(ctx: RequestContext) -> AsyncIterator[dict[str, Any]]:
        source = str(ctx.data.get("install_source", ""))
        info = ctx.data.get("install_info") or {}
        if source not in ("local", "github"):
            raise NotSupportedError(
                f"install_source {source!r} is not supported here; send the package file instead"
            )
        key = info.get("plugin_file_key") if isinstance(info, dict) else None
        if not isinstance(key, str):
            raise InvalidParamsError("install_info.plugin_file_key is required")
        content = ctx.session.files.take(key)
        yield {"current_action": "installing plugin package"}
        result = await installations.install_legacy(content, ActionScope.from_context(ctx.context))
        if result.state == "failed":
            raise InstallFailedError(
                result.message or "installation failed", details={"code": result.error_code}
            )
        yield {"current_action": "plugin installed"}

    async def upgrade_plugin(ctx: RequestContext) -> AsyncIterator[dict[str, Any]]:
        raise NotSupportedError(
            "upgrades come as a new package: install it with apply_plugin_installation "
            "or install_plugin"
        )
        yield {}  # pragma: no cover - makes this an async generator

    return {
        "delete_plugin": Route(delete_plugin, stream=True),
        "restart_plugin": Route(restart_plugin, stream=True),
        "install_plugin": Route(install_plugin, stream=True),
        "upgrade_plugin": Route(upgrade_plugin, stream=True),
    }
