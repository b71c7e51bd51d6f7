"""Managed processes: long-lived programs in a session, spoken to over their stdio.

The host runs each stdio MCP server as one managed process of the persistent
``mcp-shared`` session (process id = the server's uuid) and talks to it through the
relay (:mod:`box_runtime.relay`). Rules:

* Processes are keyed by (session, ``process_id``); a session holds any number.
  Starting a process that runs with the same spec is a reuse (the same process is
  returned); with another spec it is a :class:`BoxManagedProcessConflictError`;
  starting one that exited starts it afresh. Concurrent starts of one id make one
  process.
* ``limits.max_managed_processes`` caps running plus starting processes; exited ones
  stay readable (status, exit code, stderr preview) up to
  ``limits.max_completed_processes``, the oldest dropped first.
* Each process is supervised by one task of the table's task group: its stdout is cut
  into messages (:class:`~box_runtime.framing.LineFramer`) into a bounded outbox, the
  relay's input goes through a bounded inbox to one stdin writer, and stderr feeds a
  bounded tail. Full queues wait: a slow client slows the process, nothing is dropped.
  Output written while no client is attached waits in the outbox for the next one.
* Stopping is ordered: close stdin, wait, terminate (the process group), wait, kill.
  It happens on ``box_stop_managed_process``, when the session goes, and when the
  runtime closes (SIGTERM); a process outlives any relay connection.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import signal
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

import anyio
from anyio.abc import TaskGroup, TaskStatus

from box_runtime.backends.base import ProcessRequest, SandboxBackend, SpawnedProcess
from box_runtime.config import LimitsConfig
from box_runtime.errors import (
    BoxCapacityExceededError,
    BoxManagedProcessConflictError,
    BoxManagedProcessNotFoundError,
    BoxRuntimeUnavailableError,
)
from box_runtime.framing import (
    INTERNAL_ERROR,
    MAX_MESSAGE_BYTES,
    LineFramer,
    MessageQueue,
    Oversized,
    error_frame,
    response_id_of,
)
from box_runtime.process_models import ManagedProcessInfo, ManagedProcessSpec, ManagedProcessStatus
from box_runtime.sessions import Session, SessionKey

__all__ = ["Attachment", "ManagedProcess", "ProcessTable", "StderrTail", "process_name"]

logger = logging.getLogger("box_runtime.processes")

#: Stop order: how long each step may take before the next one.
STDIN_GRACE_SEC = 2.0
TERM_GRACE_SEC = 3.0
KILL_WAIT_SEC = 5.0
#: After the process exited, how long its stdout may still drain (a child holding it).
OUTPUT_LINGER_SEC = 1.0
#: Bounds of each direction's queue (one message may exceed the byte bound).
QUEUE_BYTES = 1024 * 1024
QUEUE_ITEMS = 256
READ_BYTES = 256 * 1024
STDERR_PREVIEW_CHARS = 4000


def process_name(process_id: str) -> str:
    """The filesystem-safe name of a process inside its sandbox."""
    return hashlib.sha256(process_id.encode("utf-8")).hexdigest()[:16]


class StderrTail:
    """The last bytes of a stream, shown as text starting at a line boundary."""

    def __init__(self, chars: int = STDERR_PREVIEW_CHARS) -> None:
        self.chars = chars
        self._keep = chars * 4  # bytes: a UTF-8 character takes at most four
        self._data = bytearray()
        self._cut = False

    def feed(self, chunk: bytes) -> None:
        self._data += chunk
        if len(self._data) > 2 * self._keep:
            del self._data[: len(self._data) - self._keep]
            self._cut = True

    def note(self, line: str) -> None:
        """Add a line of the runtime's own (marked as such)."""
        if self._data and not self._data.endswith(b"\n"):
            self._data += b"\n"
        self.feed(f"[lbp box] {line}\n".encode())

    def text(self) -> str:
        text = self._data.decode("utf-8", "replace")
        if len(text) > self.chars or self._cut:
            text = text[-self.chars :]
            newline = text.find("\n")
            if 0 <= newline < len(text) - 1:
                text = text[newline + 1 :]
        return text


@dataclass(slots=True, eq=False)
class Attachment:
    """One relay connection to a process; a newer attach cancels the older one."""

    number: int
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    replaced: bool = False


class ManagedProcess:
    """One running (or exited) managed process and the queues around its stdio."""

    def __init__(self, key: SessionKey, spec: ManagedProcessSpec, spawned: SpawnedProcess) -> None:
        self.key = key
        self.spec = spec
        self._spawned = spawned
        self.started_at = dt.datetime.now(dt.UTC)
        self.exited_at: dt.datetime | None = None
        self.exit_code: int | None = None
        self.exited = anyio.Event()
        self.finished = anyio.Event()
        self.stopping = False
        #: Messages for the client (text frames) and for the process (stdin lines).
        self.outbox: MessageQueue[str] = MessageQueue(max_bytes=QUEUE_BYTES, max_items=QUEUE_ITEMS)
        self.inbox: MessageQueue[bytes] = MessageQueue(max_bytes=QUEUE_BYTES, max_items=QUEUE_ITEMS)
        self.stderr = StderrTail()
        self.oversized = 0
        self.attach_count = 0
        self._attachment: Attachment | None = None
        self._scope: anyio.CancelScope | None = None
        self._writer_scope = anyio.CancelScope()
        self._stdout_done = anyio.Event()

    @property
    def process_id(self) -> str:
        return self.spec.process_id

    @property
    def running(self) -> bool:
        return not self.exited.is_set()

    def info(self) -> ManagedProcessInfo:
        spec = self.spec
        return ManagedProcessInfo(
            session_id=self.key.session_id,
            process_id=spec.process_id,
            status=ManagedProcessStatus.RUNNING if self.running else ManagedProcessStatus.EXITED,
            command=spec.command,
            args=list(spec.args),
            cwd=spec.cwd,
            env_keys=sorted(spec.env),
            attached=self._attachment is not None,
            started_at=self.started_at,
            exited_at=self.exited_at,
            exit_code=self.exit_code,
            stderr_preview=self.stderr.text(),
            attach_count=self.attach_count,
            oversized_messages=self.oversized,
        )

    # ------------------------------------------------------------------ relay side

    def attach(self) -> Attachment:
        """A new relay connection; the previous one (if any) is cancelled and marked."""
        previous = self._attachment
        if previous is not None:
            previous.replaced = True
            previous.scope.cancel()
        self.attach_count += 1
        attachment = Attachment(self.attach_count)
        self._attachment = attachment
        return attachment

    def detach(self, attachment: Attachment) -> None:
        if self._attachment is attachment:
            self._attachment = None

    # ------------------------------------------------------------------ supervision

    async def supervise(self) -> None:
        """Move bytes until the process ended and its output drained (a table task)."""
        spawned = self._spawned
        try:
            async with anyio.create_task_group() as tg:
                self._scope = tg.cancel_scope
                tg.start_soon(spawned.pump)
                tg.start_soon(self._read_stdout)
                tg.start_soon(self._read_stderr)
                tg.start_soon(self._write_stdin)
                code = await spawned.wait()
                if spawned.exit_note:
                    self.stderr.note(spawned.exit_note)
                self._mark_exited(code)
                with anyio.move_on_after(OUTPUT_LINGER_SEC):
                    await self._stdout_done.wait()
                tg.cancel_scope.cancel()
        except Exception:
            logger.exception("Box: supervising managed process %s failed", self.process_id)
        finally:
            self.outbox.close()
            self.inbox.close()
            self._mark_exited(None)
            with anyio.CancelScope(shield=True):
                try:
                    await spawned.aclose()
                except Exception as exc:
                    logger.debug("Box: closing process %s: %s", self.process_id, exc)
            self.finished.set()

    def _mark_exited(self, code: int | None) -> None:
        if self.exited.is_set():
            return
        self.exit_code = code
        self.exited_at = dt.datetime.now(dt.UTC)
        self.exited.set()
        self.inbox.close()
        logger.info(
            "Box: managed process %s of session %s exited (%s)",
            self.process_id,
            self.key.session_id,
            "unknown status" if code is None else f"status {code}",
        )

    async def _read_stdout(self) -> None:
        framer = LineFramer(MAX_MESSAGE_BYTES)
        stream = self._spawned.stdout
        try:
            while True:
                try:
                    chunk = await stream.receive(READ_BYTES)
                except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    break
                for item in framer.feed(chunk):
                    await self._deliver(item)
            for item in framer.end():
                await self._deliver(item)
        finally:
            self.outbox.close()
            self._stdout_done.set()

    async def _deliver(self, item: bytes | Oversized) -> None:
        if isinstance(item, bytes):
            await self.outbox.put(item.decode("utf-8", "replace"), len(item))
            return
        self.oversized += 1
        message = (
            f"the process wrote a message of at least {item.size} bytes; the relay carries "
            f"at most {MAX_MESSAGE_BYTES} bytes a message"
        )
        self.stderr.note(f"dropped a stdout message: {message}")
        logger.warning("Box: managed process %s: %s", self.process_id, message)
        request_id = response_id_of(item.head)
        if request_id is not None:
            frame = error_frame(INTERNAL_ERROR, f"Box relay: {message}", request_id)
            await self.outbox.put(frame, len(frame))

    async def _read_stderr(self) -> None:
        stream = self._spawned.stderr
        while True:
            try:
                chunk = await stream.receive(READ_BYTES)
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                return
            self.stderr.feed(chunk)
            if logger.isEnabledFor(logging.DEBUG):
                logger.debug(
                    "Box: %s stderr: %s", self.process_id, chunk[:512].decode("utf-8", "replace")
                )

    async def _write_stdin(self) -> None:
        stdin = self._spawned.stdin
        try:
            with self._writer_scope:
                while True:
                    try:
                        data = await self.inbox.get()
                    except anyio.EndOfStream:
                        break
                    try:
                        await stdin.send(data)
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                        self.inbox.clear()
                        self.inbox.close()  # the process closed its stdin
                        break
        finally:
            with anyio.CancelScope(shield=True):
                try:
                    await stdin.aclose()
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    pass

    # ------------------------------------------------------------------ stop

    async def stop(self) -> None:
        """Close stdin, wait, terminate, wait, kill; return once supervision ended."""
        self.stopping = True
        with anyio.CancelScope(shield=True):
            if self.running:
                self.inbox.clear()
                self.inbox.close()
                self._writer_scope.cancel()  # its finally closes stdin at once
                steps = (
                    (None, STDIN_GRACE_SEC),
                    (signal.SIGTERM, TERM_GRACE_SEC),
                    (signal.SIGKILL, KILL_WAIT_SEC),
                )
                for signum, seconds in steps:
                    if signum is not None and self.running:
                        try:
                            await self._spawned.signal(signum)
                        except Exception as exc:
                            logger.warning(
                                "Box: signalling process %s failed: %s", self.process_id, exc
                            )
                    with anyio.move_on_after(seconds):
                        await self.exited.wait()
                    if not self.running:
                        break
            if self._scope is not None:
                with anyio.move_on_after(OUTPUT_LINGER_SEC):
                    await self.finished.wait()
                self._scope.cancel()
            await self.finished.wait()


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
    ) -> tuple[ManagedProcess, bool]:
        """The process for ``spec`` (started, or reused when it runs): ``(process, reused)``."""
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
            )
            spawned = await backend.spawn(session.plan, session.handle, request)
            process = ManagedProcess(key, spec, spawned)
            self._processes.setdefault(key, {})[process_id] = process
            tg.start_soon(self._supervise, process)
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

    async def _supervise(self, process: ManagedProcess) -> None:
        await process.supervise()
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
