"""A view of a session that stamps one envelope context on everything it sends.

Several logical peers can share one connection when each request carries its own
``context`` (the 0.7 shared-runtime slots do this with an installation binding). A
:class:`ScopedSession` is one such peer: calls, streams and pushed files go out
with its context, and closing it closes only the view, never the connection.
"""

from __future__ import annotations

from typing import Any

from langbot_plugin.rpc.errors import ConnectionClosedError
from langbot_plugin.rpc.files import FileStore
from langbot_plugin.rpc.session import RPCSession
from langbot_plugin.rpc.stream_call import USE_DEFAULT, StreamCall, UseDefault

__all__ = ["ScopedSession"]


class ScopedSession:
    """``session`` as seen by one logical peer, addressed by ``context``."""

    def __init__(self, session: RPCSession, context: dict[str, Any]) -> None:
        self.session = session
        self.context = context
        self.name = f"{session.name}[{next(iter(context.values()), '')}]"
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed or self.session.closed

    @property
    def files(self) -> FileStore:
        return self.session.files

    def _check(self, action: str) -> None:
        if self.closed:
            raise ConnectionClosedError(f"{self.name}: closed before {action}")

    async def call(
        self,
        action: str,
        data: dict[str, Any] | None = None,
        *,
        context: dict[str, Any] | None = None,
        timeout: float | UseDefault | None = USE_DEFAULT,
    ) -> dict[str, Any]:
        """Call ``action`` with this view's context (a ``context`` given here is ignored)."""
        self._check(action)
        return await self.session.call(action, data, context=self.context, timeout=timeout)

    def stream(
        self,
        action: str,
        data: dict[str, Any] | None = None,
        *,
        context: dict[str, Any] | None = None,
        timeout: float | UseDefault | None = USE_DEFAULT,
    ) -> StreamCall:
        self._check(action)
        return self.session.stream(action, data, context=self.context, timeout=timeout)

    async def send_file(
        self, content: bytes, *, suffix: str = "", context: dict[str, Any] | None = None
    ) -> str:
        self._check("send_file")
        return await self.session.send_file(content, suffix=suffix, context=self.context)

    def close(self) -> None:
        """Close this view; the connection and its other views stay up."""
        self._closed = True
