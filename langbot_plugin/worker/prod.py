"""``lbp run -s`` / ``lbp run --prod``: a plugin run the way a runtime runs an installed one.

The reference runtimes start each installed plugin as ``lbp run -s --prod --tag
author/name``: the link is the process's stdin/stdout, and the plugin announces itself
with ``register_plugin`` (``prod_mode`` and the one-time registration capability the
runtime put in ``$LANGBOT_PLUGIN_REGISTRATION_CAPABILITY``) before it is initialized.
Our runtime drives its workers without that announcement (it knows what it started),
so a refusal of ``register_plugin`` as an unknown action is expected and harmless.
The reference starts its shared workers with the same command line and then attaches
slots of the same package (``attach_plugin_slot`` without ``plugin_dir``): once a slot
is attached, this process serves as a shared worker of its own folder.

``--prod`` without ``-s`` connects to the runtime's plugin WebSocket with the
capability instead of a debug key (the reference's Windows path); our runtime accepts
only debug keys there, and says so. A production plugin never reloads and never
reconnects: when the runtime goes away, the process ends.
"""

from __future__ import annotations

import logging
import os

import anyio

from langbot_plugin.protocol import plugin_link as plug
from langbot_plugin.protocol.slots import SLOT_ACTIONS
from langbot_plugin.rpc import ActionNotFoundError, Dispatcher, Route, RPCSession, Transport
from langbot_plugin.rpc.transport_stdio import process_stdio_transport
from langbot_plugin.rpc.transport_ws import connect_ws
from langbot_plugin.serving_gc import settle_for_serving
from langbot_plugin.worker.loader import LoadedPlugin
from langbot_plugin.worker.service import PluginService
from langbot_plugin.worker.shared import SharedService

_SLOT_NAMES = frozenset(name for spec in SLOT_ACTIONS for name in spec.names)

__all__ = [
    "REGISTRATION_CAPABILITY_ENV",
    "REGISTRATION_CAPABILITY_HEADER",
    "serve_over_stdio",
    "serve_production_ws",
    "take_capability",
]

logger = logging.getLogger("langbot_plugin.run")

REGISTRATION_CAPABILITY_ENV = "LANGBOT_PLUGIN_REGISTRATION_CAPABILITY"
REGISTRATION_CAPABILITY_HEADER = "X-LangBot-Plugin-Registration-Capability"
REGISTER_TIMEOUT = 300.0


class _DedicatedOrShared:
    """Serves one plugin, until the runtime attaches slots: then slots of its folder."""

    def __init__(self, loaded: LoadedPlugin) -> None:
        self.dedicated = PluginService(loaded)
        self.shared = SharedService(default_dir=loaded.root)

    def resolve(self, action: str) -> Route | None:
        if action in _SLOT_NAMES or self.shared.slots:
            return self.shared.resolve(action)
        return self.dedicated.resolve(action)


def take_capability() -> str:
    """The registration capability, removed from the environment (the plugin's code
    never sees it)."""
    return os.environ.pop(REGISTRATION_CAPABILITY_ENV, "").strip()


async def _announce(
    session: RPCSession, loaded: LoadedPlugin, *, prod: bool, capability: str
) -> None:
    try:
        await plug.REGISTER_PLUGIN.call(
            session,
            {
                "plugin_container": loaded.container().model_dump(mode="json"),
                "prod_mode": prod,
                "registration_capability": capability,
            },
            timeout=REGISTER_TIMEOUT,
        )
    except ActionNotFoundError:
        logger.debug("the runtime drives %s without registration", loaded.identity)
        return
    logger.info("plugin %s registered", loaded.identity)


async def _serve(
    transport: Transport, service: Dispatcher, loaded: LoadedPlugin, *, prod: bool, capability: str
) -> None:
    session = RPCSession(transport, service, name="runtime", file_chunk_bytes=1 << 20)
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.serve)
        await _announce(session, loaded, prod=prod, capability=capability)
        settle_for_serving()  # registered: this process serves from now on
        await session.wait_closed()
        tg.cancel_scope.cancel()


async def serve_over_stdio(loaded: LoadedPlugin, *, prod: bool, capability: str) -> None:
    """Serve the runtime on stdin/stdout until it closes stdin."""
    async with process_stdio_transport(frame_threshold=None) as transport:
        service = _DedicatedOrShared(loaded)
        await _serve(transport, service, loaded, prod=prod, capability=capability)


async def serve_production_ws(loaded: LoadedPlugin, url: str, capability: str) -> None:
    """Connect once with the registration capability; end when the runtime goes away."""
    async with connect_ws(url, headers={REGISTRATION_CAPABILITY_HEADER: capability}) as transport:
        await _serve(transport, PluginService(loaded), loaded, prod=True, capability=capability)
