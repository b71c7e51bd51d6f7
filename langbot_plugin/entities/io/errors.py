"""Errors a host sees when it calls a runtime through a ``Handler`` (:mod:`..runtime.io`).

::

    Exception
    ├── DependencyInstallError     pip could not install some plugin requirements
    └── DependencyVerificationError  installed requirements did not verify
    RPCError (langbot_plugin.rpc)
    ├── RemoteError
    │   └── ActionCallError         the peer answered with an error (``message``, ``data``)
    ├── RPCTimeoutError
    │   └── ActionCallTimeoutError  no answer within the call's timeout
    └── ConnectionClosedError       the link is gone (the RPC core's own class)

``ActionCallError`` keeps the peer's error as ``__cause__`` (an :class:`RPCError` of the
class the peer's code names), so a caller that wants the typed error can have it.
"""

from __future__ import annotations

from langbot_plugin.protocol.handler_calls import ActionCallError
from langbot_plugin.rpc.errors import ConnectionClosedError, RPCTimeoutError

__all__ = [
    "ActionCallError",
    "ActionCallTimeoutError",
    "ConnectionClosedError",
    "DependencyInstallError",
    "DependencyVerificationError",
]


class ActionCallTimeoutError(RPCTimeoutError):
    """No answer came within the call's timeout (the peer was asked to stop)."""


class DependencyInstallError(Exception):
    """pip could not install some requirements of a plugin."""

    def __init__(
        self,
        failed: list[str],
        plugin: str | None = None,
        details: dict[str, str] | None = None,
    ) -> None:
        self.failed = list(failed)
        self.plugin = plugin
        self.details = dict(details or {})
        who = f"Plugin {plugin} " if plugin else ""
        super().__init__(f"{who}failed to install {len(self.failed)} dependencies: {self.failed}")


class DependencyVerificationError(Exception):
    """Requirements pip reported installed could not be found, or have other versions."""

    def __init__(
        self,
        missing: list[str],
        version_mismatch: list[str] | None = None,
        plugin: str | None = None,
    ) -> None:
        self.missing = list(missing)
        self.version_mismatch = list(version_mismatch or [])
        self.plugin = plugin
        who = f"Plugin {plugin}: " if plugin else ""
        super().__init__(
            f"{who}missing dependencies: {self.missing}, version mismatch: {self.version_mismatch}"
        )
