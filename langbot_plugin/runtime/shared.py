"""Shared workers: the installations the host runs in ``shared-runtime-v1`` mode.

The shared installations of one interpreter share one worker process (``python -m
langbot_plugin.worker --shared``), each a *slot* (``attach_plugin_slot``,
``get_plugin_slot_container``, ``detach_plugin_slot``) picked by the binding every
request carries. Each slot is a :class:`PluginHandle` of its own (its peer a
:class:`~langbot_plugin.rpc.scoped.ScopedSession`), treated like a plugin with its own
process. Failures stay with their slot (``slot_attach_failed``); when the process dies
the runtime starts it again with the dedicated workers' backoff and reattaches every
slot.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process, TaskGroup

from langbot_plugin.protocol import slots
from langbot_plugin.rpc import NotReadyError, RequestContext, RPCError, RPCSession
from langbot_plugin.rpc.failures import log_failure
from langbot_plugin.rpc.processes import stop_process
from langbot_plugin.rpc.scoped import ScopedSession
from langbot_plugin.rpc.transport_stdio import pipe_transport
from langbot_plugin.runtime.confine import Launch, WorkerLaunch
from langbot_plugin.runtime.confine.watch import report_exhausted, watch_limits
from langbot_plugin.runtime.forwarding import plugin_table
from langbot_plugin.runtime.logbuffer import LogBuffer, LogLine
from langbot_plugin.runtime.plugins import PluginHandle, shut_down
from langbot_plugin.runtime.state import RuntimeState
from langbot_plugin.runtime.workers import (
    STOP_SEC,
    RestartPolicy,
    Restarts,
    WorkerError,
    WorkerSpec,
    alive,
    pump_logs,
    spawn_confined,
    tail,
)

__all__ = ["SharedPool", "SlotAttachError"]

logger = logging.getLogger("langbot_plugin.runtime.shared")


class SlotAttachError(WorkerError):
    """A plugin could not be loaded into its shared worker; the others keep serving."""

    code = "slot_attach_failed"


@dataclass(eq=False)
class _Slot:
    uuid: str
    spec: WorkerSpec
    logs: LogBuffer
    handle: PluginHandle | None = None

    @property
    def context(self) -> dict[str, Any]:
        return {**self.spec.binding.as_context(), "installation_uuid": self.uuid}


@dataclass(eq=False)
class _Pool:
    python: str
    #: the folder that holds every installed package (read-only in its jail)
    packages: Path
    slots: dict[str, _Slot] = field(default_factory=dict[str, _Slot])
    session: RPCSession | None = None
    process: Process | None = None
    up: anyio.Event = field(default_factory=anyio.Event)
    start_error: BaseException | None = None
    stopping: bool = False
    done: anyio.Event = field(default_factory=anyio.Event)
    lock: anyio.Lock = field(default_factory=anyio.Lock)


class SharedPool:
    """Starts shared workers, attaches and detaches their slots, restarts them."""

    def __init__(self, state: RuntimeState, policy: RestartPolicy | None = None) -> None:
        self.state = state
        self.policy = policy or RestartPolicy()
        self._pools: dict[str, _Pool] = {}
        self._logs: dict[str, LogBuffer] = {}
        self._tg: TaskGroup | None = None

    def bind(self, task_group: TaskGroup) -> None:
        self._tg = task_group

    def _find(self, uuid: str) -> tuple[_Pool, _Slot] | None:
        for pool in self._pools.values():
            slot = pool.slots.get(uuid)
            if slot is not None:
                return pool, slot
        return None

    def running(self, installation_uuid: str) -> bool:
        found = self._find(installation_uuid)
        return found is not None and found[1].handle is not None

    def live_workers(self) -> int:
        """Shared worker processes running now (``lbp_rt_plugin_workers``)."""
        return sum(1 for p in self._pools.values() if alive(p.process))

    def logs_for(self, identity: str) -> LogBuffer | None:
        for pool in self._pools.values():
            for slot in pool.slots.values():
                if slot.spec.identity == identity:
                    return slot.logs
        return None

    # ----------------------------------------------------------------- slots

    async def start(self, installation_uuid: str, spec: WorkerSpec) -> PluginHandle:
        """Attach (or attach again) the installation to the worker of its interpreter."""
        if self._tg is None:
            raise WorkerError("the runtime is not running")
        await self.stop(installation_uuid, keep_logs=True)
        logs = self._logs.setdefault(installation_uuid, LogBuffer())
        pool = self._pools.get(spec.python)
        if pool is None or pool.stopping:
            pool = _Pool(python=spec.python, packages=spec.plugin_dir.resolve().parent)
            self._pools[spec.python] = pool
            self._tg.start_soon(self._keep_running, pool)
        await pool.up.wait()
        if pool.start_error is not None:
            self._pools.pop(spec.python, None)
            raise WorkerError(f"the shared worker did not start: {pool.start_error}")
        slot = _Slot(installation_uuid, spec, logs)
        pool.slots[installation_uuid] = slot
        try:
            return await self._attach(pool, slot)
        except (RPCError, TimeoutError) as exc:
            pool.slots.pop(installation_uuid, None)
            if not pool.slots:
                await self._stop_pool(pool)
            reason = exc.message if isinstance(exc, RPCError) else "timed out"
            raise SlotAttachError(
                f"plugin {spec.identity} did not start in its shared worker: {reason}\n"
                f"{tail(logs)}".rstrip(),
                details={"identity": spec.identity},
            ) from None

    async def _attach(self, pool: _Pool, slot: _Slot) -> PluginHandle:
        async with pool.lock:
            session = pool.session
            if session is None:
                raise WorkerError("the shared worker is not running")
            spec = slot.spec
            handle = spec.handle(ScopedSession(session, slot.context))
            slot.handle = handle  # the plugin's initialize() may already call the host
            params = slots.AttachSlotParams(
                plugin_settings=spec.settings, plugin_dir=str(spec.plugin_dir.resolve())
            )
            try:
                with anyio.fail_after(self.policy.ready_timeout):
                    await slots.ATTACH_PLUGIN_SLOT.call(handle.session, params)
                    described = await slots.GET_PLUGIN_SLOT_CONTAINER.call(handle.session)
            except BaseException:
                slot.handle = None
                raise
            handle.container = described.plugin_container
            self.state.registry.add(handle)
            logger.info(
                "installation %s: %s attached to the shared worker (%d slots)",
                slot.uuid,
                spec.identity,
                len(pool.slots),
            )
            return handle

    async def stop(self, installation_uuid: str, *, keep_logs: bool = False) -> None:
        """Detach the installation; the worker stops with its last slot."""
        found = self._find(installation_uuid)
        if not keep_logs:
            self._logs.pop(installation_uuid, None)
        if found is None:
            return
        pool, slot = found
        pool.slots.pop(installation_uuid, None)
        handle = slot.handle
        if handle is not None:
            self.state.registry.remove(handle)
            if not handle.session.closed and pool.slots:
                with anyio.move_on_after(5):
                    try:
                        await slots.DETACH_PLUGIN_SLOT.call(handle.session, timeout=5)
                    except RPCError as exc:
                        logger.warning("detaching %s: %s", slot.spec.identity, exc.message)
            handle.session.close()
        if not pool.slots:
            await self._stop_pool(pool)

    async def stop_all(self) -> None:
        async with anyio.create_task_group() as tg:
            for pool in list(self._pools.values()):
                tg.start_soon(self._stop_pool, pool)

    # ----------------------------------------------------------------- processes

    async def _stop_pool(self, pool: _Pool) -> None:
        pool.stopping = True
        if self._pools.get(pool.python) is pool:
            del self._pools[pool.python]
        for slot in pool.slots.values():
            if slot.handle is not None:
                self.state.registry.remove(slot.handle)
        session = pool.session
        if session is not None and not session.closed:
            await shut_down(session, 3)
        if pool.process is not None:
            await stop_process(pool.process, stdin_grace=STOP_SEC, grace=STOP_SEC, release=False)
        with anyio.move_on_after(10):
            await pool.done.wait()

    async def _keep_running(self, pool: _Pool) -> None:
        restarts = Restarts(
            self.policy,
            f"the shared worker on {pool.python}",
            self.state.metrics.restarted("shared"),
        )
        try:
            while not pool.stopping:
                began = time.monotonic()
                try:
                    await self._run_once(pool)
                except Exception as exc:  # whatever the worker sent: it restarts, we serve on
                    log_failure(logger, f"the shared worker on {pool.python}", "its run", exc)
                    await self._after_failure(pool, exc)
                if pool.stopping or pool.start_error is not None:
                    return
                for slot in pool.slots.values():
                    note = "the shared worker exited; it will be restarted"
                    slot.logs.add(LogLine(time.time(), "ERROR", note))
                await anyio.sleep(restarts.wait_after_exit(began))
        finally:
            pool.done.set()
            pool.up.set()

    async def _after_failure(self, pool: _Pool, exc: Exception) -> None:
        """Clean up after :meth:`_run_once` failed: its slots out of the registry, the
        process ended, a first start reported as failed."""
        for slot in pool.slots.values():
            if slot.handle is not None:
                self.state.registry.remove(slot.handle)
                slot.handle = None
        pool.session = None
        if pool.process is not None and pool.process.returncode is None:
            await stop_process(pool.process, stdin_grace=STOP_SEC, grace=STOP_SEC, release=False)
        if not pool.up.is_set():
            pool.start_error = exc
            pool.up.set()

    def _route_logs(self, pool: _Pool, line: LogLine) -> None:
        if line.plugin:
            for slot in pool.slots.values():
                if slot.spec.identity == line.plugin:
                    slot.logs.add(line)
                    return
        for slot in pool.slots.values():
            slot.logs.add(line)

    def _current(self, pool: _Pool, ctx: RequestContext) -> PluginHandle:
        uuid = (ctx.context or {}).get("installation_uuid")
        slot = pool.slots.get(uuid) if isinstance(uuid, str) else None
        if slot is None or slot.handle is None:
            raise NotReadyError("this call names no attached slot of the shared worker")
        return slot.handle

    async def _run_once(self, pool: _Pool) -> None:
        digest = hashlib.sha256(pool.python.encode()).hexdigest()[:16]
        try:
            launch, process, from_child, from_parent = await spawn_confined(
                self.state,
                WorkerLaunch(
                    key=f"shared-{digest}",
                    identity="the shared worker",
                    python=pool.python,
                    args=["-m", "langbot_plugin.worker", "--shared"],
                    read_only=[pool.packages],  # a slot may be attached at any time
                    cwd=None,
                    limits=self.state.options.confinement.limits,
                ),
            )
        except OSError as exc:
            pool.start_error = exc
            pool.up.set()
            return
        pool.process = process
        restarted = pool.up.is_set()
        try:
            await self._serve(pool, process, (from_child, from_parent), restarted, launch)
        finally:
            exhausted = None if pool.stopping else launch.exhausted()
            launch.close()
        if exhausted is not None:
            for slot in pool.slots.values():
                report_exhausted(exhausted, slot.spec.identity, slot.logs.add)
        logger.info(
            "shared worker exited (%s) with %d plugins", process.returncode, len(pool.slots)
        )

    async def _serve(
        self,
        pool: _Pool,
        process: Process,
        pipes: tuple[int, int],
        restarted: bool,
        launch: Launch,
    ) -> None:
        assert process.stderr is not None
        async with anyio.create_task_group() as tg:
            tg.start_soon(pump_logs, process.stderr, functools.partial(self._route_logs, pool))
            route = functools.partial(self._route_logs, pool)
            tg.start_soon(watch_limits, launch, "the shared worker", route)
            async with pipe_transport(*pipes, frame_threshold=None) as transport:
                routes = plugin_table(lambda ctx: self._current(pool, ctx), self.state)
                session = RPCSession(
                    transport, routes, name="shared-worker", file_chunk_bytes=1 << 20
                )
                pool.session = session
                tg.start_soon(session.serve)
                if restarted:
                    tg.start_soon(self._attach_again, pool)
                pool.up.set()
                await process.wait()
                session.close()
            for slot in pool.slots.values():
                if slot.handle is not None:
                    self.state.registry.remove(slot.handle)
                    slot.handle = None
            pool.session = None
            tg.cancel_scope.cancel()

    async def _attach_again(self, pool: _Pool) -> None:
        for slot in list(pool.slots.values()):
            try:
                await self._attach(pool, slot)
            except Exception as exc:  # what the worker answered: this slot stays down
                log_failure(logger, f"plugin {slot.spec.identity}", "attaching it again", exc)
                slot.logs.add(LogLine(time.time(), "ERROR", f"not attached again: {exc}"))
