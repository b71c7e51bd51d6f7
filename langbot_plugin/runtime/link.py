"""The runtime's side of one plugin connection (a debug plugin or a worker).

Before ``register_plugin`` completes, the only thing a plugin may do is register;
afterwards its calls are forwarded to the host under its own binding. Registration
of a debug plugin follows the released host's order: create and read the plugin's
settings at the host, initialize the plugin with them, read back its container,
and only then answer.
"""

from __future__ import annotations

import hmac
import logging

from langbot_plugin.protocol import plugin_link as plug
from langbot_plugin.protocol.containers import PluginSettings
from langbot_plugin.protocol.host_link import (
    GET_PLUGIN_SETTINGS,
    INITIALIZE_PLUGIN_SETTINGS,
    PluginSettingsParams,
)
from langbot_plugin.protocol.identities import identity_problem
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.protocol.spec import Empty
from langbot_plugin.rpc import (
    InvalidParamsError,
    NotReadyError,
    PermissionDeniedError,
    RequestContext,
    RPCSession,
    Transport,
    UnauthenticatedError,
)
from langbot_plugin.runtime.debug_keys import DebugKey
from langbot_plugin.runtime.forwarding import plugin_table
from langbot_plugin.runtime.plugin_check import unknown_components
from langbot_plugin.runtime.plugins import PluginHandle
from langbot_plugin.runtime.state import RuntimeState

__all__ = ["PluginLink"]

logger = logging.getLogger("langbot_plugin.runtime.link")

HOST_WAIT_SECONDS = 30.0


class PluginLink:
    """Serves one plugin connection; ``debug_key`` is the key it authenticated with."""

    def __init__(self, state: RuntimeState, debug_key: DebugKey) -> None:
        self.state = state
        self.debug_key = debug_key
        self.handle: PluginHandle | None = None
        self.table = plugin_table(self.current, state)
        self.table.add(plug.REGISTER_PLUGIN, self._register)

    def current(self, ctx: RequestContext | None = None) -> PluginHandle:
        if self.handle is None:
            raise NotReadyError("call register_plugin first")
        return self.handle

    async def serve(self, transport: Transport, name: str) -> None:
        session = RPCSession(transport, self.table, name=name, file_chunk_bytes=1 << 20)
        try:
            await session.serve()
        finally:
            if self.handle is not None and self.handle.session is session:
                self.state.registry.remove(self.handle)
                logger.info("plugin %s disconnected", self.handle.identity)

    async def _register(self, params: plug.RegisterPluginParams, ctx: RequestContext) -> Empty:
        await self.register(params, ctx.session)
        return Empty()

    async def register(
        self, params: plug.RegisterPluginParams, session: RPCSession
    ) -> PluginHandle:
        if params.prod_mode:
            raise PermissionDeniedError("production registration is not accepted on the debug port")
        presented = params.plugin_debug_key
        if presented and not hmac.compare_digest(presented.encode(), self.debug_key.key.encode()):
            raise UnauthenticatedError(
                "the debug key in register_plugin differs from the one presented"
            )
        container = params.plugin_container
        for label, value in (("author", container.author), ("name", container.name)):
            if reason := identity_problem(value):
                raise InvalidParamsError(f"plugin {label} {value!r} {reason}")
        for unknown in unknown_components(container):
            logger.warning(
                "debug plugin %s/%s: %s is not a component kind this runtime serves; "
                "LangBot will not see it",
                container.author,
                container.name,
                unknown,
            )

        host = await self.state.upstream.wait(timeout=HOST_WAIT_SECONDS)
        workspace = self.debug_key.scope
        scope_context = workspace.workspace_context() or None
        who = PluginSettingsParams(plugin_author=container.author, plugin_name=container.name)
        await INITIALIZE_PLUGIN_SETTINGS.call(
            host,
            who.model_copy(update={"install_source": "debug", "install_info": {}}),
            context=scope_context,
        )
        settings: PluginSettings = await GET_PLUGIN_SETTINGS.call(host, who, context=scope_context)
        binding = ActionScope.model_validate(
            {**workspace.workspace_context(), "installation_uuid": settings.installation_uuid}
        )
        handle = PluginHandle(
            session=session,
            container=container,
            debug=True,
            workspace=workspace,
            binding=binding,
            settings=settings,
        )
        self.handle = handle  # its initialize() may already call the host
        await initialize(handle)
        replaced = self.state.registry.add(handle)
        if replaced is not None and replaced.session is not session:
            replaced.session.close()
        logger.info(
            "debug plugin %s registered (%d components)", handle.identity, len(container.components)
        )
        return handle


async def initialize(handle: PluginHandle) -> None:
    """Give the plugin its settings, then read back what it became."""
    await plug.INITIALIZE_PLUGIN.call(
        handle.session, plug.InitializePluginParams(plugin_settings=handle.settings)
    )
    handle.container = await plug.GET_PLUGIN_CONTAINER.call(handle.session)
