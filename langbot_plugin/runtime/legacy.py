"""The lifecycle actions of older hosts: install, upgrade, delete and restart by name.

The 4.11 host still sends ``delete_plugin`` and ``restart_plugin`` for debug plugins
(under the bridge scope); 0.5 hosts also install packages with ``install_plugin``:
a pushed file (``local``, ``github``) or a download from the marketplace
(:mod:`.marketplace`), through the same installer.
Each action streams ``{"current_action": ...}`` progress items.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial

from langbot_plugin.protocol import control_link as ctl
from langbot_plugin.protocol.host_link import GET_PLUGIN_SETTINGS, PluginSettingsParams
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.protocol.spec import ActionTable, Params
from langbot_plugin.rpc import InvalidParamsError, NotSupportedError, RequestContext, RPCError
from langbot_plugin.runtime.installations import Installations
from langbot_plugin.runtime.link import initialize
from langbot_plugin.runtime.marketplace import PluginRef, cloud_service_url, download_package
from langbot_plugin.runtime.plugin.mgr import PluginInstallSource
from langbot_plugin.runtime.plugins import PluginHandle
from langbot_plugin.runtime.state import RuntimeState

__all__ = ["InstallFailedError", "add_legacy"]


class InstallFailedError(RPCError):
    """An older lifecycle action could not be done (no installation record, a failed
    restart)."""

    code = "install_failed"


def add_legacy(table: ActionTable, state: RuntimeState, installations: Installations) -> None:
    def find(params: ctl.LifecycleRef, ctx: RequestContext) -> tuple[str, PluginHandle | None]:
        identity = f"{params.plugin_author}/{params.plugin_name}"
        return identity, state.registry.find(identity, ActionScope.from_context(ctx.context))

    async def delete_plugin(
        params: ctl.LifecycleRef, ctx: RequestContext
    ) -> AsyncIterator[ctl.Progress]:
        identity, handle = find(params, ctx)
        if handle is None:
            yield ctl.Progress(current_action=f"{identity} is not running; nothing to remove")
            return
        yield ctl.Progress(current_action=f"removing {identity}")
        if handle.debug:
            await state.retire(handle)
        else:
            await installations.remove(handle.binding.installation_uuid or "")
        yield ctl.Progress(current_action="plugin removed")

    async def restart_plugin(
        params: ctl.LifecycleRef, ctx: RequestContext
    ) -> AsyncIterator[ctl.Progress]:
        identity, handle = find(params, ctx)
        if handle is None:
            yield ctl.Progress(current_action=f"{identity} is not running; nothing to restart")
            return
        yield ctl.Progress(current_action=f"restarting {identity}")
        if handle.debug:
            who = PluginSettingsParams(plugin_author=handle.author, plugin_name=handle.name)
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
        yield ctl.Progress(current_action="plugin restarted")

    async def upgrade_plugin(params: Params, ctx: RequestContext) -> AsyncIterator[ctl.Progress]:
        raise NotSupportedError(
            "upgrades come as a new package: install it with apply_plugin_installation "
            "or install_plugin"
        )
        yield ctl.Progress(current_action="")  # pragma: no cover - makes this a generator

    table.add(ctl.DELETE_PLUGIN, delete_plugin)
    table.add(ctl.RESTART_PLUGIN, restart_plugin)
    table.add(ctl.INSTALL_PLUGIN, partial(_install_plugin, state, installations))
    table.add(ctl.UPGRADE_PLUGIN, upgrade_plugin)


#: The sources whose package the host pushes as a file.
_PUSHED = (PluginInstallSource.LOCAL, PluginInstallSource.GITHUB)


def _source(value: str) -> PluginInstallSource | None:
    try:
        return PluginInstallSource(value)
    except ValueError:
        return None


async def _install_plugin(
    state: RuntimeState,
    installations: Installations,
    params: ctl.InstallParams,
    ctx: RequestContext,
) -> AsyncIterator[ctl.Progress]:
    """``install_plugin``: a pushed package, or one downloaded from the marketplace."""
    workspace = ActionScope.from_context(ctx.context)
    expected: tuple[str, str] | None = None
    source = _source(params.install_source)
    if source is PluginInstallSource.MARKETPLACE:
        ref = PluginRef.from_install_info(params.install_info)
        config = state.upstream.config
        base = cloud_service_url(config.cloud_service_url if config else None)
        content = b""
        async for step in download_package(base, ref):
            yield ctl.Progress.model_validate(
                {"current_action": "downloading plugin package", "metadata": step.metadata()}
            )
            if step.content is not None:
                content = step.content
        expected = (ref.identity, ref.version)
    elif source in _PUSHED:
        key = params.install_info.get("plugin_file_key")
        if not isinstance(key, str):
            raise InvalidParamsError("install_info.plugin_file_key is required")
        content = ctx.session.files.take(key)
    else:
        names = ", ".join(item.value for item in (*_PUSHED, PluginInstallSource.MARKETPLACE))
        raise NotSupportedError(f"install_source {params.install_source!r} is not one of {names}")
    yield ctl.Progress(current_action="installing plugin package")
    result = await installations.install_legacy(content, workspace, expected=expected)
    if result.state == "failed":
        raise InstallFailedError(
            result.message or "installation failed",
            details={**(result.details or {}), "code": result.error_code},
        )
    yield ctl.Progress(current_action="plugin installed")
