"""Plugins the runtime serves, and which of them a host request addresses.

A :class:`PluginHandle` is one live plugin process (a debug plugin connected through
``lbp run``, or an installed plugin's worker): its RPC session, what it reported about
itself, its settings, and the scope it acts in. The host addresses plugins by envelope
context: debug plugins answer under their workspace's *bridge* installation, installed
plugins under their own installation; a request without a context (older or local
hosts) addresses every plugin.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio

from langbot_plugin.protocol import plugin_link as plug
from langbot_plugin.protocol.containers import ManifestDump, PluginContainer, PluginSettings
from langbot_plugin.protocol.scope import ActionScope, bridge_installation_uuid
from langbot_plugin.rpc import FileStore, RPCError, StreamCall
from langbot_plugin.runtime.inflight import InflightCalls

__all__ = ["PluginHandle", "PluginPeer", "PluginRegistry", "shut_down"]


class PluginPeer(Protocol):
    """How the runtime talks to one plugin: its own RPC session, or (a slot of a shared
    worker) a :class:`~langbot_plugin.rpc.scoped.ScopedSession` of the worker's."""

    @property
    def closed(self) -> bool: ...

    @property
    def files(self) -> FileStore: ...

    async def call(
        self,
        action: str,
        data: dict[str, Any] | None = None,
        *,
        context: dict[str, Any] | None = None,
        timeout: Any = ...,
    ) -> dict[str, Any]: ...

    def stream(
        self,
        action: str,
        data: dict[str, Any] | None = None,
        *,
        context: dict[str, Any] | None = None,
        timeout: Any = ...,
    ) -> StreamCall: ...

    async def send_file(
        self, content: bytes, *, suffix: str = "", context: dict[str, Any] | None = None
    ) -> str: ...

    def close(self) -> None: ...


async def shut_down(peer: PluginPeer, wait: float) -> None:
    """Tell a plugin process to stop (best effort, at most ``wait`` seconds), then close
    its link."""
    with anyio.move_on_after(wait), contextlib.suppress(RPCError):
        await plug.SHUTDOWN.call(peer, timeout=wait)
    peer.close()


@dataclass(eq=False)
class PluginHandle:
    session: PluginPeer
    container: PluginContainer
    debug: bool
    workspace: ActionScope
    binding: ActionScope
    settings: PluginSettings = field(default_factory=PluginSettings)
    order: int = 0
    #: served under the workspace's bridge installation (debug and legacy installs)
    bridged: bool = False

    @property
    def identity(self) -> str:
        return self.container.identity

    @property
    def author(self) -> str:
        return self.container.author

    @property
    def name(self) -> str:
        return self.container.name

    @property
    def ready(self) -> bool:
        return self.container.enabled and self.container.status == "initialized"

    def host_context(self) -> dict[str, Any] | None:
        """The envelope context for calls made to the host on this plugin's behalf."""
        context = self.binding.as_context()
        return context or None

    def addressed_by(self, scope: ActionScope) -> bool:
        if not scope.shares_workspace_with(self.workspace):
            return False
        if scope.installation_uuid is None:
            return True
        if self.debug or self.bridged:
            if scope.instance_uuid is None or scope.workspace_uuid is None:
                return False
            bridge = bridge_installation_uuid(scope.instance_uuid, scope.workspace_uuid)
            return scope.installation_uuid == bridge
        return scope.installation_uuid == self.binding.installation_uuid

    def has_component(self, kind: str, name: str) -> bool:
        """Whether the plugin offers a component of ``kind`` named ``name`` (no copies made)."""
        return any(
            c.manifest.kind == kind and c.manifest.name == name for c in self.container.components
        )

    def components(self, *kinds: str) -> list[ManifestDump]:
        """Components of these kinds, owned by the plugin's identity (as the host expects)."""
        return [
            c.model_copy(update={"owner": self.identity})
            for c in self.container.components_of(*kinds)
        ]

    def describe(self) -> PluginContainer:
        """What the host sees: the plugin's own report plus the runtime's view of it."""
        owned = [
            entry.model_copy(
                update={"manifest": entry.manifest.model_copy(update={"owner": self.identity})}
            )
            for entry in self.container.components
        ]
        return self.container.model_copy(
            update={
                "debug": self.debug,
                "install_source": self.settings.install_source,
                "install_info": self.settings.install_info,
                "priority": self.settings.priority,
                "plugin_config": self.settings.plugin_config,
                "components": owned,
            }
        )


class PluginRegistry:
    """Live plugins, at most one per identity and workspace."""

    def __init__(self) -> None:
        #: the calls made to these plugins that are still open (``runtime.inflight``)
        self.calls = InflightCalls()
        self._handles: list[PluginHandle] = []
        self._counter = 0
        self._changed = anyio.Event()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_for(self, condition: Callable[[PluginRegistry], bool]) -> None:
        """Wait until ``condition(self)`` holds; it is checked again after each change."""
        while not condition(self):
            await self._changed.wait()

    def __iter__(self) -> Iterator[PluginHandle]:
        return iter(list(self._handles))

    def __len__(self) -> int:
        return len(self._handles)

    def add(self, handle: PluginHandle) -> PluginHandle | None:
        """Register ``handle``; return the handle it replaces, if any."""
        self._counter += 1
        handle.order = self._counter
        key = (handle.identity, handle.workspace.workspace_key)
        same = [h for h in self._handles if (h.identity, h.workspace.workspace_key) == key]
        replaced = same[0] if same else None
        if replaced is not None:
            self._handles.remove(replaced)
        self._handles.append(handle)
        self._notify()
        return replaced

    def remove(self, handle: PluginHandle) -> None:
        if handle in self._handles:
            self._handles.remove(handle)
            self._notify()

    def in_scope(
        self,
        scope: ActionScope,
        include_plugins: list[str] | None = None,
        *,
        ready_only: bool = False,
    ) -> list[PluginHandle]:
        """Plugins a request with ``scope`` addresses, highest priority first."""
        chosen = [
            h
            for h in self._handles
            if h.addressed_by(scope)
            and (include_plugins is None or h.identity in include_plugins)
            and (h.ready or not ready_only)
        ]
        chosen.sort(key=lambda h: (-h.settings.priority, h.order))
        return chosen

    def find(self, identity: str, scope: ActionScope) -> PluginHandle | None:
        return next((h for h in self.in_scope(scope) if h.identity == identity), None)

    def by_installation(self, installation_uuid: str) -> PluginHandle | None:
        return next(
            (h for h in self._handles if h.binding.installation_uuid == installation_uuid), None
        )
