"""The runtime's link to the host: whichever configured control session is current."""

from __future__ import annotations

import math

import anyio

from langbot_plugin.protocol.handshake import RuntimeConfig
from langbot_plugin.rpc import NotReadyError, RPCSession

__all__ = ["Upstream"]


class Upstream:
    """Tracks the control session that completed the handshake most recently."""

    def __init__(self) -> None:
        self.session: RPCSession | None = None
        self.config: RuntimeConfig | None = None
        self._changed = anyio.Event()

    def attach(self, session: RPCSession, config: RuntimeConfig) -> None:
        self.session, self.config = session, config
        self._changed.set()
        self._changed = anyio.Event()

    def detach(self, session: RPCSession) -> None:
        if self.session is session:
            self.session = None
            self._changed.set()
            self._changed = anyio.Event()

    def current(self) -> RPCSession:
        session = self.session
        if session is None or session.closed:
            raise NotReadyError("the LangBot host is not connected to this runtime")
        return session

    async def wait(self, timeout: float | None = 30.0) -> RPCSession:
        """The current session, waiting up to ``timeout`` seconds for a host to connect."""
        with anyio.move_on_after(math.inf if timeout is None else timeout):
            while self.session is None or self.session.closed:
                await self._changed.wait()
        return self.current()
