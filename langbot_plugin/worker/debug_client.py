"""``lbp run``: connect a plugin folder to a runtime's debug port and keep it there.

Registers with the key from ``PLUGIN_DEBUG_KEY``, re-registers after the runtime
restarts, and stops with a clear error when the key is refused.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import anyio
from websockets.exceptions import InvalidStatus, InvalidURI

from langbot_plugin.api.definition.discovery import ManifestError
from langbot_plugin.protocol import plugin_link as plug
from langbot_plugin.rpc import (
    NotReadyError,
    PermissionDeniedError,
    RPCError,
    RPCSession,
    UnauthenticatedError,
)
from langbot_plugin.rpc.transport_ws import connect_ws
from langbot_plugin.worker.hot_reload import wait_for_change
from langbot_plugin.worker.loader import LoadedPlugin
from langbot_plugin.worker.service import PluginService

__all__ = ["DEBUG_KEY_HEADER", "DebugClient", "KeyRefusedError"]

logger = logging.getLogger("langbot_plugin.run")

DEBUG_KEY_HEADER = "X-LangBot-Plugin-Debug-Key"
REGISTER_TIMEOUT = 300.0


class KeyRefusedError(Exception):
    """The runtime refused the debug key; retrying cannot help."""


@dataclass
class DebugClient:
    root: Path
    url: str
    key: str
    retry_max_seconds: float = 5.0
    hot_reload: bool = True

    async def run_once(self, loaded: LoadedPlugin) -> bool:
        """One connection: register, then serve until the runtime goes away.

        Returns ``True`` when it ended because the plugin's files changed.
        """
        service = PluginService(loaded)
        try:
            async with connect_ws(self.url, headers={DEBUG_KEY_HEADER: self.key}) as transport:
                session = RPCSession(transport, service, name="runtime", file_chunk_bytes=1 << 20)
                async with session.running():
                    await plug.REGISTER_PLUGIN.call(
                        session,
                        {
                            "plugin_container": loaded.container().model_dump(mode="json"),
                            "prod_mode": False,
                            "plugin_debug_key": self.key,
                        },
                        timeout=REGISTER_TIMEOUT,
                    )
                    logger.info("plugin %s registered at %s", loaded.identity, self.url)
                    return await self._serve_until_closed_or_changed(session)
        except InvalidStatus as exc:
            if exc.response.status_code in (401, 403):
                body = (
                    exc.response.body.decode("utf-8", "replace").strip()
                    if exc.response.body
                    else ""
                )
                raise KeyRefusedError(body or "the runtime refused the debug key") from None
            raise

    async def _serve_until_closed_or_changed(self, session: RPCSession) -> bool:
        changed: list[str] = []
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                changed.extend(await wait_for_change(self.root))
                tg.cancel_scope.cancel()

            if self.hot_reload:
                tg.start_soon(watch)
            await session.wait_closed()
            tg.cancel_scope.cancel()
        if changed:
            logger.info("reloading after changes to %s", ", ".join(changed[:5]))
        return bool(changed)

    async def run(self) -> None:
        """Serve forever, reconnecting with backoff; raises :class:`KeyRefusedError`."""
        loaded = LoadedPlugin(self.root)
        delay = 0.5
        while True:
            try:
                if await self.run_once(loaded):
                    await self._reload(loaded)
                    continue
                logger.info("runtime connection closed; reconnecting")
                delay = 0.5
            except (UnauthenticatedError, PermissionDeniedError) as exc:
                raise KeyRefusedError(exc.message) from None
            except InvalidURI as exc:
                raise KeyRefusedError(f"bad runtime URL {self.url!r}: {exc}") from None
            except NotReadyError as exc:
                logger.warning("runtime not ready (%s); retrying", exc.message)
            except (OSError, TimeoutError, InvalidStatus, RPCError) as exc:
                logger.warning("cannot reach the runtime at %s (%s); retrying", self.url, exc)
            await anyio.sleep(delay)
            delay = min(self.retry_max_seconds, delay * 2)
            await self._reload(loaded)

    async def _reload(self, loaded: LoadedPlugin) -> None:
        """Re-read the folder; a broken edit is logged and retried after the next change."""
        while True:
            try:
                loaded.reload()
                return
            except ManifestError as exc:
                logger.error("cannot reload: %s (waiting for the next change)", exc)
                await wait_for_change(self.root)
