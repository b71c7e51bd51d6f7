"""Managed processes: long-lived programs in a session, spoken to over their stdio.

Keyed by (session, ``process_id``); a start with the same spec reuses the running
process, another spec is a :class:`BoxManagedProcessConflictError`. Each process
(:class:`~box_runtime.managed_process.ManagedProcess`) is supervised by one task of the
table's task group, and stopping is ordered (close stdin, terminate the group, kill).
The rules and limits: docs/box.md, *Managed processes*.
"""

from __future__ import annotations

import hashlib
import logging
from collections import deque
from collections.abc import Callable, Iterator, Mapping

import anyio
from anyio.abc import TaskGroup, TaskStatus

from box_runtime.artifacts import Artifact
from box_runtime.backends.base import ProcessRequest, SandboxBackend
from box_runtime.config import LimitsConfig
from box_runtime.errors import (
    BoxCapacityExceededError,
    BoxManagedProcessConflictError,
    BoxManagedProcessNotFoundError,
    BoxRuntimeUnavailableError,
)
from box_runtime.managed_process import ManagedProcess
from box_runtime.process_models import ManagedProcessSpec
from box_runtime.sessions import Session, SessionKey

__all__ = ["ProcessTable", "process_name"]

logger = logging.getLogger("box_runtime.processes")


def process_name(process_id: str) -> str:
    """The filesystem-safe name of a process inside its sandbox."""
    return hashlib.sha256(process_id.encode("utf-8")).hexdigest()[:16]


class ProcessTable:
    """Every managed process of the runtime; supervised in the table's task group."""

    def __init__(self, limits: Callable[[], LimitsConfig]) -> None:
        self._limits = limits
        self._processes: dict[SessionKey, dict[str, ManagedProcess]] = {}
        self._starting: dict[tuple[SessionKey, str], anyio.Event] = {}
        self._exited: deque[ManagedProcess] = deque()
        self._tg: TaskGroup | None = None

    async def serve(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Host the supervisors until cancelled (``BoxRuntime.running`` runs it)."""
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                task_status.started()
                await anyio.sleep_forever()
        finally:
            self._tg = None

    # ------------------------------------------------------------------ queries

    def all(self) -> Iterator[ManagedProcess]:
        for processes in self._processes.values():
            yield from processes.values()

    def running_count(self, keys: Callable[[SessionKey], bool] | None = None) -> int:
        return sum(1 for p in self.all() if p.running and (keys is None or keys(p.key)))

    def in_session(self, key: SessionKey) -> list[ManagedProcess]:
        return list(self._processes.get(key, {}).values())

    def get(self, key: SessionKey, process_id: str) -> ManagedProcess:
        process = self._processes.get(key, {}).get(process_id)
        if process is None:
            raise BoxManagedProcessNotFoundError(
                f"session {key.session_id} has no managed process with process_id={process_id}"
            )
        return process

    # ------------------------------------------------------------------ start

    async def start(
        self,
        session: Session,
        backend: SandboxBackend,
        spec: ManagedProcessSpec,
        env: Mapping[str, str],
        *,
        artifacts: tuple[Artifact, ...] = (),
        on_exit: Callable[[], None] | None = None,
    ) -> tuple[ManagedProcess, bool]:
        """The process for ``spec`` (started, or reused when it runs): ``(process, reused)``.

        A started process sees ``artifacts`` for its whole life; ``on_exit`` runs once it
        ended (not for a reused one).
        """
        key, process_id = session.key, spec.process_id
        while True:
            pending = self._starting.get((key, process_id))
            if pending is not None:
                await pending.wait()
                continue
            existing = self._processes.get(key, {}).get(process_id)
            if existing is None or not existing.running:
                break
            if existing.stopping:
                await existing.finished.wait()  # being stopped: start afresh afterwards
                continue
            if existing.spec.same_process(spec):
                return existing, True
            raise BoxManagedProcessConflictError(
                f"managed process {process_id} already runs in session {key.session_id} "
                "with another command, arguments, environment, cwd or memory limit; stop it first",
                details={"process_id": process_id},
            )
        tg = self._tg
        if tg is None:
            raise BoxRuntimeUnavailableError("the Box runtime is not running (shutting down?)")
        limit = self._limits().max_managed_processes
        active = self.running_count() + len(self._starting)
        if active >= limit:
            raise BoxCapacityExceededError(
                f"Box managed process capacity reached ({limit} processes)",
                details={"quota": "max_managed_processes", "limit": limit, "actual": active},
            )
        done = anyio.Event()
        self._starting[(key, process_id)] = done
        try:
            request = ProcessRequest(
                name=process_name(process_id),
                argv=(spec.command, *spec.args),
                cwd=spec.cwd,
                env=dict(env),
                memory_mb=spec.memory_mb,
                artifacts=artifacts,
            )
            spawned = await backend.spawn(session.plan, session.handle, request)
            process = ManagedProcess(key, spec, spawned)
            self._processes.setdefault(key, {})[process_id] = process
            tg.start_soon(self._supervise, process, on_exit)
        finally:
            del self._starting[(key, process_id)]
            done.set()
        logger.info(
            "Box: managed process %s started in session %s (%s)",
            process_id,
            key.session_id,
            spec.command,
        )
        return process, False

    async def _supervise(self, process: ManagedProcess, on_exit: Callable[[], None] | None) -> None:
        try:
            await process.supervise()
        finally:
            if on_exit is not None:
                on_exit()
        self._exited.append(process)
        self._trim_exited()

    def _trim_exited(self) -> None:
        keep = self._limits().max_completed_processes
        while len(self._exited) > keep:
            old = self._exited.popleft()
            processes = self._processes.get(old.key, {})
            if processes.get(old.process_id) is old:
                del processes[old.process_id]
                if not processes:
                    del self._processes[old.key]

    # ------------------------------------------------------------------ stop

    async def stop(self, key: SessionKey, process_id: str) -> None:
        process = self.get(key, process_id)
        await process.stop()

    async def stop_session(self, key: SessionKey) -> None:
        """Stop every process of a session (its sandbox is going) and forget them."""
        for (session_key, _), pending in list(self._starting.items()):
            if session_key == key:
                await pending.wait()
        processes = self._processes.pop(key, {})
        await _stop_all(list(processes.values()))

    async def stop_all(self) -> None:
        """Stop every process (the runtime is closing); records stay readable."""
        await _stop_all([p for p in self.all() if p.running])


async def _stop_all(processes: list[ManagedProcess]) -> None:
    if not processes:
        return
    with anyio.CancelScope(shield=True):
        async with anyio.create_task_group() as tg:
            for process in processes:
                tg.start_soon(process.stop)
