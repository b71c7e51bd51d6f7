"""A shared worker (``execution_mode: shared-runtime-v1``): several plugins, one process.

The runtime attaches one *slot* per installation (``attach_plugin_slot``, with the
binding as envelope context); each slot is a :class:`LoadedPlugin` in its own module
namespace (:mod:`.namespaces`) with its own :class:`PluginService` and its own
channel, a view of the connection that stamps the slot's binding on every call, so
the runtime forwards a slot's calls under that installation only.

Every other request is routed by its envelope context to its slot and runs with the
slot active (its absolute self-imports resolve to its own modules, its log records
are tagged with its identity). A slot that fails to load is refused and forgotten;
a slot's background task that dies is logged under the slot's identity at once. The
other slots keep serving either way.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import AsyncIterator, Coroutine, Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import anyio

from langbot_plugin.protocol import plugin_link as plug
from langbot_plugin.protocol import slots
from langbot_plugin.protocol.spec import ActionTable, Empty
from langbot_plugin.rpc import InvalidParamsError, NotFoundError, RequestContext, Route
from langbot_plugin.rpc.routes import StreamHandler, UnaryHandler
from langbot_plugin.rpc.scoped import ScopedSession
from langbot_plugin.rpc.tracing import trace_table
from langbot_plugin.worker.loader import LoadedPlugin
from langbot_plugin.worker.logging_setup import current_slot_identity
from langbot_plugin.worker.namespaces import SlotNamespace
from langbot_plugin.worker.service import PluginService

__all__ = ["SharedService"]

logger = logging.getLogger("langbot_plugin.worker.shared")


@dataclass(eq=False)
class _Slot:
    key: str
    namespace: SlotNamespace
    service: PluginService

    @property
    def identity(self) -> str:
        return self.service.loaded.identity

    def enter(self) -> None:
        """Make this slot the current task's (the task's context ends with the request)."""
        current_slot_identity.set(self.identity)
        self.namespace.enter()


class SharedService:
    """The dispatcher of a shared worker: slot actions, and everything else by slot."""

    def __init__(self, default_dir: Path | None = None) -> None:
        self.default_dir = default_dir
        self.slots: dict[str, _Slot] = {}
        self._attach_lock = anyio.Lock()
        self.table = ActionTable()
        self.table.add(slots.ATTACH_PLUGIN_SLOT, self.attach)
        self.table.add(slots.DETACH_PLUGIN_SLOT, self.detach)
        self.table.add(slots.GET_PLUGIN_SLOT_CONTAINER, self.slot_container)
        self.table.add(plug.SHUTDOWN, self.shutdown)
        trace_table(self.table, "runtime")
        self._watching_tasks = False
        self._by_slot: dict[tuple[str, bool], Route] = {}

    # ----------------------------------------------------------------- routing

    def resolve(self, action: str) -> Route | None:
        route = self.table.resolve(action)
        if route is not None:
            return route
        sample = next(iter(self.slots.values()), None)
        shape = sample.service.resolve(action) if sample is not None else None
        if sample is not None and shape is None:
            return None
        stream = shape is not None and shape.stream
        built = self._by_slot.get((action, stream))
        if built is None:
            built = self._by_slot[action, stream] = self._slot_route(action, stream)
        return built

    def _slot_route(self, action: str, stream: bool) -> Route:
        """The route of ``action`` in whichever slot a request's context names (built once
        per action)."""
        if stream:

            async def stream_in_slot(ctx: RequestContext) -> AsyncIterator[dict[str, Any]]:
                slot, handler = self._route_for(action, ctx)
                slot.enter()
                try:
                    async for item in cast(StreamHandler, handler)(ctx):
                        yield item
                finally:
                    slot.namespace.drop_aliases()

            return Route(stream_in_slot, stream=True)

        async def unary_in_slot(ctx: RequestContext) -> dict[str, Any]:
            slot, handler = self._route_for(action, ctx)
            slot.enter()
            try:
                return await cast(UnaryHandler, handler)(ctx)
            finally:
                slot.namespace.drop_aliases()

        return Route(unary_in_slot)

    def _slot_key(self, ctx: RequestContext) -> str:
        context = ctx.context or {}
        key = context.get("installation_uuid")
        if not isinstance(key, str) or not key:
            raise InvalidParamsError(
                "a shared worker needs the installation binding as the request's context"
            )
        return key

    def _route_for(self, action: str, ctx: RequestContext) -> tuple[_Slot, Any]:
        key = self._slot_key(ctx)
        slot = self.slots.get(key)
        if slot is None:
            raise NotFoundError(f"no plugin slot is attached for installation {key}")
        route = slot.service.resolve(action)
        if route is None:
            raise NotFoundError(f"{action} is not served by {slot.identity}")
        return slot, route.handler

    # ----------------------------------------------------------------- slot actions

    async def attach(self, params: slots.AttachSlotParams, ctx: RequestContext) -> Empty:
        key = self._slot_key(ctx)
        folder = Path(params.plugin_dir) if params.plugin_dir else self.default_dir
        if folder is None:
            raise InvalidParamsError("attach_plugin_slot needs plugin_dir in this worker")
        self._watch_tasks()
        async with self._attach_lock:
            previous = self.slots.pop(key, None)
            if previous is not None:
                await self._retire(previous)
            namespace = SlotNamespace(folder)
            channel = ScopedSession(ctx.session, dict(ctx.context or {}))
            try:
                loaded = LoadedPlugin(folder, namespace)
                slot = _Slot(key, namespace, PluginService(loaded, channel))
                slot.enter()
                loaded.preload()
                await loaded.initialize(params.plugin_settings, channel)
            except BaseException:
                namespace.forget()
                raise
            finally:
                namespace.drop_aliases()
            self.slots[key] = slot
        logger.info("slot %s: plugin %s attached (%d slots)", key, slot.identity, len(self.slots))
        return Empty()

    async def detach(self, params: Empty, ctx: RequestContext) -> Empty:
        slot = self.slots.pop(self._slot_key(ctx), None)
        if slot is not None:
            await self._retire(slot)
            logger.info("slot %s: plugin %s detached", slot.key, slot.identity)
        return Empty()

    async def slot_container(self, params: Empty, ctx: RequestContext) -> slots.SlotContainer:
        key = self._slot_key(ctx)
        slot = self.slots.get(key)
        if slot is None:
            raise NotFoundError(f"no plugin slot is attached for installation {key}")
        loaded = slot.service.loaded
        return slots.SlotContainer(
            enabled=loaded.settings.enabled,
            priority=loaded.settings.priority,
            plugin_config=loaded.settings.plugin_config,
            plugin_container=loaded.container(),
        )

    async def shutdown(self, params: Empty, ctx: RequestContext) -> Empty:
        logger.info("shared worker: runtime asked to shut down (%d slots)", len(self.slots))
        return Empty()

    async def _retire(self, slot: _Slot) -> None:
        slot.service.stopping = True
        channel = slot.service.channel
        if isinstance(channel, ScopedSession):
            channel.close()  # a call the plugin still makes fails at once
        slot.namespace.forget()

    # ----------------------------------------------------------------- background tasks

    def _watch_tasks(self) -> None:
        """Log at once, under its slot's name, a plugin task that dies with an error."""
        if self._watching_tasks:
            return
        self._watching_tasks = True
        loop = asyncio.get_running_loop()
        previous = loop.get_task_factory()
        owners: weakref.WeakKeyDictionary[asyncio.Future[Any], str] = weakref.WeakKeyDictionary()

        def factory(
            loop: asyncio.AbstractEventLoop,
            coro: Generator[Any, None, Any] | Coroutine[Any, Any, Any],
            **kwargs: Any,
        ) -> asyncio.Future[Any]:
            task: asyncio.Future[Any] = (
                previous(loop, coro, **kwargs)
                if previous is not None
                else asyncio.Task(coro, loop=loop, **kwargs)
            )
            owner = current_slot_identity.get()
            if owner:
                owners[task] = owner
                task.add_done_callback(_report_failure)
            return task

        def _report_failure(task: asyncio.Future[Any]) -> None:
            if task.cancelled() or task.exception() is None:
                return
            error = task.exception()
            logger.error(
                "plugin %s: a background task died: %s: %s",
                owners.get(task, "?"),
                type(error).__name__,
                error,
                exc_info=error,
            )

        loop.set_task_factory(factory)  # pyright: ignore[reportArgumentType]
