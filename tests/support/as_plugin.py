"""A plugin's channel to the host that stamps the caller identity, as ``lbp rt`` does.

The plugin runtime sets ``caller_plugin_identity`` on every call it forwards from a
plugin; tests and benches that link an SDK proxy straight to a host (an in-memory
RPC link, no runtime between) wrap the plugin's session in :class:`AsPlugin`.
"""

from __future__ import annotations

from typing import Any

from langbot_plugin.rpc import RPCSession
from langbot_plugin.rpc.files import FileStore
from langbot_plugin.rpc.stream_call import StreamCall

__all__ = ["AsPlugin"]


class AsPlugin:
    """A :class:`~langbot_plugin.api.proxies.channel.Channel` whose calls carry ``identity``."""

    def __init__(self, session: RPCSession, identity: str) -> None:
        self.session = session
        self.identity = identity

    def _stamp(self, data: dict[str, Any]) -> dict[str, Any]:
        return {**data, "caller_plugin_identity": self.identity}

    async def call(
        self, action: str, data: dict[str, Any], *, timeout: float | None
    ) -> dict[str, Any]:
        return await self.session.call(action, self._stamp(data), timeout=timeout)

    def stream(self, action: str, data: dict[str, Any], *, timeout: float | None) -> StreamCall:
        return self.session.stream(action, self._stamp(data), timeout=timeout)

    async def send_file(self, content: bytes, *, suffix: str = "") -> str:
        return await self.session.send_file(content, suffix=suffix)

    @property
    def files(self) -> FileStore:
        return self.session.files
