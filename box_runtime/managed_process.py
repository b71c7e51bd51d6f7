"""One managed process: its state, the queues around its stdio, and its ordered stop.

:class:`ManagedProcess` is supervised by one task (:meth:`ManagedProcess.supervise`):
stdout is cut into messages (:class:`~box_runtime.framing.LineFramer`) for the client,
the client's messages go to one stdin writer, stderr feeds a bounded tail
(:class:`StderrTail`). Each direction has a bounded queue; full queues wait, so a slow
client slows the process and nothing is dropped. While a client is attached and
nothing is queued, a message takes the direct path (written to stdin at once, or sent
by the stdout reader itself), which saves two event-loop turns a round trip and keeps
the order: the queue is used whenever anything waits in it.

Stop order (:meth:`ManagedProcess.stop`): close stdin, wait, SIGTERM, wait, SIGKILL.
"""

from __future__ import annotations

import datetime as dt
import logging
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio

from box_runtime.backends.base import SpawnedProcess
from box_runtime.framing import (
    INTERNAL_ERROR,
    MAX_MESSAGE_BYTES,
    LineFramer,
    MessageQueue,
    Oversized,
    error_frame,
    response_id_of,
)
from box_runtime.output import clipped_text
from box_runtime.process_models import ManagedProcessInfo, ManagedProcessSpec, ManagedProcessStatus
from box_runtime.sessions import SessionKey
from langbot_plugin.rpc.failures import log_failure

__all__ = [
    "KILL_WAIT_SEC",
    "OUTPUT_LINGER_SEC",
    "QUEUE_BYTES",
    "QUEUE_ITEMS",
    "STDERR_PREVIEW_BYTES",
    "STDIN_GRACE_SEC",
    "TERM_GRACE_SEC",
    "Attachment",
    "ManagedProcess",
    "StderrTail",
]

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
STDERR_PREVIEW_BYTES = 4000


class StderrTail:
    """The last ``limit`` bytes of a stream, shown as text starting at a line boundary.

    A cut preview says so as every cut output of the Box does
    (:func:`~box_runtime.output.clipped_text`): how much is missing before it, and the
    clip marker at the end.
    """

    def __init__(self, limit: int = STDERR_PREVIEW_BYTES) -> None:
        self.limit = limit
        self.total = 0
        self._data = bytearray()

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self._data += chunk
        if len(self._data) > 2 * self.limit:
            del self._data[: len(self._data) - self.limit]

    def note(self, line: str) -> None:
        """Add a line of the runtime's own (marked as such)."""
        if self._data and not self._data.endswith(b"\n"):
            self.feed(b"\n")
        self.feed(f"[lbp box] {line}\n".encode())

    def text(self) -> str:
        if self.total <= self.limit:
            return self._data.decode("utf-8", "replace")
        kept = bytes(self._data[-self.limit :])
        newline = kept.find(b"\n")
        if 0 <= newline < len(kept) - 1:
            kept = kept[newline + 1 :]
        return clipped_text(b"", kept, self.limit, self.total)


@dataclass(slots=True, eq=False)
class Attachment:
    """One relay connection to a process; a newer attach cancels the older one."""

    number: int
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    replaced: bool = False
    #: Sends one frame to this connection's client (the relay sets it).
    sink: Callable[[str], Awaitable[None]] | None = None
    #: A frame is being sent to this client (from the queue or the direct path).
    sending: bool = False


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
        self._stdin_busy = False  # the stdin writer holds a message
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

    async def to_process(self, line: bytes) -> None:
        """One complete stdin line from the client; raises ClosedResourceError after stdin closed.

        Written at once when nothing waits for stdin (the rest of a partial write goes
        first in the queue); queued otherwise, waiting while the queue is full.
        """
        inbox = self.inbox
        if inbox.closed:
            raise anyio.ClosedResourceError
        if not inbox and not self._stdin_busy:
            written = self._spawned.write_nowait(line)
            if written >= len(line):
                return
            if written:
                inbox.put_back(line[written:], len(line) - written)
                return
        await inbox.put(line, len(line))

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
        except Exception as exc:  # what the process did: logged once, the Box serves on
            peer = f"Box: managed process {self.process_id} of session {self.key.session_id}"
            log_failure(logger, peer, "supervising it", exc)
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
            await self._to_client(item.decode("utf-8", "replace"), len(item))
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
            await self._to_client(frame, len(frame))

    async def _to_client(self, text: str, size: int) -> None:
        """Send directly while a client is attached and idle with nothing queued, else queue."""
        attachment = self._attachment
        if (
            attachment is None
            or attachment.sink is None
            or attachment.sending
            or self.outbox
            or attachment.replaced
        ):
            await self.outbox.put(text, size)
            return
        attachment.sending = True
        try:
            await attachment.sink(text)
        except Exception:
            self.outbox.put_back(text, size)  # the connection went away: the next one gets it
        finally:
            attachment.sending = False

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
                    self._stdin_busy = True
                    try:
                        await stdin.send(data)
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                        self.inbox.clear()
                        self.inbox.close()  # the process closed its stdin
                        break
                    finally:
                        self._stdin_busy = False
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
