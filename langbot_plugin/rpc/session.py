"""One end of a bidirectional action-RPC connection.

Both peers call and serve over the same transport: :meth:`RPCSession.call` (unary, with
a timeout; a caller that gives up sends ``__cancel_action``), :meth:`RPCSession.stream`
(flow-controlled, :mod:`.stream_call`), serving through a :class:`~.routes.Dispatcher`
(each request in its own task, :mod:`.request_tasks`, ``max_inflight`` at once, then up
to ``max_queued`` waiting, then ``too_many_requests``), the reserved actions of
:mod:`.reserved`, and the :class:`~.stream_call.Outbound` seam a ``StreamCall`` uses.
docs/architecture.md ("The RPC layer") describes each. Handler exceptions become wire
errors in one place, :func:`.wire_errors.error_response`.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Self

import anyio

from langbot_plugin.rpc import tracing
from langbot_plugin.rpc.envelope import (
    CONTINUE,
    END,
    Request,
    Response,
    dumps,
    frame_hint,
    parse_frame,
)
from langbot_plugin.rpc.errors import (
    ActionNotFoundError,
    ConnectionClosedError,
    MalformedMessageError,
    MessageTooLargeError,
    RPCError,
    RPCTimeoutError,
    TooManyRequestsError,
)
from langbot_plugin.rpc.files import REFERENCE_CHUNK_BYTES, FileStore, new_file_key
from langbot_plugin.rpc.log_context import serving
from langbot_plugin.rpc.request_tasks import RequestTasks
from langbot_plugin.rpc.reserved import (
    CANCEL,
    CONTROL_ACTIONS,
    FILE_CHUNK,
    HEARTBEAT,
    PING,
    STREAM_ACK,
)
from langbot_plugin.rpc.routes import Dispatcher, RequestContext, Route
from langbot_plugin.rpc.stream_call import (
    USE_DEFAULT,
    Inbox,
    Reply,
    StreamCall,
    UseDefault,
)
from langbot_plugin.rpc.transport import DEFAULT_MAX_MESSAGE_BYTES, ReceivedItem, Transport
from langbot_plugin.rpc.wire_errors import attached_details, error_from_response, error_response

__all__ = ["DEFAULT_TIMEOUT", "RPCSession"]

logger = logging.getLogger("langbot_plugin.rpc")

DEFAULT_TIMEOUT = 30.0


# --------------------------------------------------------------------------- plumbing


class _Window:
    """The producer side of a flow-controlled stream."""

    __slots__ = ("_event", "acked", "context", "sent", "size")

    def __init__(self, size: int, context: dict[str, Any] | None) -> None:
        self.size = size
        self.context = context
        self.sent = 0
        self.acked = 0
        self._event = asyncio.Event()

    def ack(self, index: int) -> None:
        if index > self.acked:
            self.acked = index
            self._event.set()

    async def wait_for_room(self) -> None:
        while self.sent - self.acked >= self.size:
            self._event.clear()
            await self._event.wait()


@dataclass(slots=True)
class _Running:
    scope: anyio.CancelScope
    context: dict[str, Any] | None
    window: _Window | None = None


# --------------------------------------------------------------------------- session


class RPCSession:
    """A connection's RPC endpoint. Use :meth:`running` (or :meth:`serve`) to run it."""

    def __init__(
        self,
        transport: Transport,
        dispatcher: Dispatcher | None = None,
        *,
        name: str = "rpc",
        max_inflight: int = 128,
        max_queued: int | None = None,
        stream_window: int = 8,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        default_timeout: float | None = DEFAULT_TIMEOUT,
        files: FileStore | None = None,
        file_chunk_bytes: int = REFERENCE_CHUNK_BYTES,
    ) -> None:
        self.transport = transport
        self.dispatcher = dispatcher
        self.name = name
        self.max_inflight = max_inflight
        #: requests beyond ``max_inflight`` wait here (in order) instead of being refused
        self.max_queued = 4 * max_inflight if max_queued is None else max_queued
        self.stream_window = stream_window
        self.ack_every = max(1, stream_window // 2)
        self.max_message_bytes = max_message_bytes
        self.default_timeout = default_timeout
        self.files = files if files is not None else FileStore()
        #: Chunk size for :meth:`send_file`; reference peers refuse more than 16 KiB, so
        #: raise it only on links whose both ends are ours.
        self.file_chunk_bytes = file_chunk_bytes
        self._next_seq = secrets.randbelow(100_000) + 1
        self._pending: dict[int, Inbox | Reply] = {}
        self._running: dict[int, _Running] = {}
        self._active = 0
        self._waiting: deque[tuple[Request, Route, _Running]] = deque()
        self._tasks: RequestTasks | None = None
        self._scope = anyio.CancelScope()
        self._closed = anyio.Event()
        self._close_error: RPCError | None = None
        self._started = anyio.Event()

    # ------------------------------------------------------------------ lifecycle

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    async def wait_closed(self) -> None:
        await self._closed.wait()

    async def serve(self) -> None:
        """Serve until the peer goes away or :meth:`close` is called."""
        tasks = RequestTasks(self.name)
        try:
            with self._scope:
                self._tasks = tasks
                self._started.set()
                try:
                    await self._receive_loop()
                finally:
                    self._shut("connection closed by peer")
        finally:
            self._shut("connection closed")
            await tasks.aclose()
            with anyio.CancelScope(shield=True):
                for stream in (self.transport.send, self.transport.receive):
                    try:
                        await stream.aclose()
                    except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                        pass

    @asynccontextmanager
    async def running(self) -> AsyncGenerator[Self]:
        """Run the session in the background for the duration of the block."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.serve)
            await self._started.wait()
            try:
                yield self
            finally:
                self.close()
                tg.cancel_scope.cancel()

    def close(self) -> None:
        """Stop serving; pending calls fail with :class:`ConnectionClosedError`."""
        self._shut("session closed")
        self._scope.cancel()

    def _shut(self, reason: str) -> None:
        if self._closed.is_set():
            return
        self._close_error = ConnectionClosedError(f"{self.name}: {reason}")
        self._closed.set()
        for inbox in self._pending.values():
            inbox.fail(self._close_error)
        for running in self._running.values():
            running.scope.cancel()

    def _spawn(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        if self._tasks is not None and not self._closed.is_set():
            self._tasks.start(fn(*args))

    # ------------------------------------------------------------------ sending

    async def _send(self, frame: dict[str, Any]) -> None:
        if self._closed.is_set():
            raise self._close_error or ConnectionClosedError(self.name)
        text = dumps(frame)
        if (
            len(text) * 4 > self.max_message_bytes
            and len(text.encode("utf-8")) > self.max_message_bytes
        ):
            raise MessageTooLargeError(
                f"outgoing frame exceeds {self.max_message_bytes} bytes",
                details={"limit": self.max_message_bytes},
            )
        try:
            await self.transport.send.send(text)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            self._shut(f"send failed: {exc!r}")
            raise ConnectionClosedError(f"{self.name}: connection lost while sending") from exc

    async def _respond(self, response: Response) -> None:
        """Send an answer; one that cannot be sent (too large, or holding what the wire
        rule refuses, say a plugin's lone surrogate) becomes that error instead."""
        try:
            await self._send(response.to_wire())
        except (MessageTooLargeError, MalformedMessageError) as exc:
            logger.warning(
                "%s: answer to %d not sent (%s): %s", self.name, response.seq_id, exc.code, exc
            )
            await self._send(error_response(response.seq_id, exc).to_wire())

    async def _respond_quietly(self, response: Response) -> None:
        try:
            await self._respond(response)
        except ConnectionClosedError:
            pass

    def _take_seq(self) -> int:
        seq = self._next_seq
        self._next_seq += 1
        return seq

    # ------------------------------------------------------------------ the Outbound seam

    def open_call(self, inbox: Inbox | Reply) -> int:
        """Reserve a sequence number whose responses are routed to ``inbox``."""
        seq = self._take_seq()
        self._pending[seq] = inbox
        return seq

    def close_call(self, seq: int) -> None:
        """Stop routing responses of ``seq``."""
        self._pending.pop(seq, None)

    async def send_request(self, request: Request) -> None:
        """Send one request frame (``ConnectionClosedError`` once the session is closed)."""
        await self._send(request.to_wire())

    async def acknowledge(self, seq: int, index: int, context: dict[str, Any] | None) -> None:
        """Acknowledge ``index`` consumed items of our stream call ``seq``."""
        ack = {"seq_id": seq, "index": index}
        await self._send(Request(self._take_seq(), STREAM_ACK, ack, context).to_wire())

    def waiting_calls(self) -> list[int]:
        """Sequence numbers of our unary calls still waiting for their answer."""
        return [seq for seq, inbox in self._pending.items() if isinstance(inbox, Reply)]

    def deliver(self, response: Response) -> bool:
        """Route ``response`` as if the peer had sent it; False when no call waits for it.

        A host's own tests answer an outbound call this way (the reference exposes its
        response futures as ``Handler.resp_waiters``).
        """
        if response.seq_id not in self._pending:
            return False
        self._route_response(response)
        return True

    # ------------------------------------------------------------------ calling

    async def call(
        self,
        action: str,
        data: dict[str, Any] | None = None,
        *,
        context: dict[str, Any] | None = None,
        timeout: float | UseDefault | None = USE_DEFAULT,
    ) -> dict[str, Any]:
        """Call ``action`` on the peer and return its ``data``; raises the peer's error."""
        traced = tracing.active()
        if traced is None or action.startswith("__"):  # reserved actions: the link's own
            return await self._call(action, data, context, timeout, None)
        with traced.client(action) as trace:
            return await self._call(action, data, context, timeout, trace)

    async def _call(
        self,
        action: str,
        data: dict[str, Any] | None,
        context: dict[str, Any] | None,
        timeout: float | UseDefault | None,
        trace: dict[str, str] | None,
    ) -> dict[str, Any]:
        limit = self.default_timeout if isinstance(timeout, UseDefault) else timeout
        inbox = Reply()
        seq = self.open_call(inbox)
        try:
            # asyncio's own timeout costs a fraction of an anyio cancel scope, and unary
            # calls are the hot path (every forwarded call crosses two of them)
            async with asyncio.timeout(limit):
                await self._send(Request(seq, action, data or {}, context, trace=trace).to_wire())
                response = await inbox.get()
        except TimeoutError:
            self._spawn(self.cancel_remote, seq, context)
            raise RPCTimeoutError(
                f"{action} got no answer within {limit} s",
                details={"action": action, "timeout": limit},
            ) from None
        except anyio.get_cancelled_exc_class():
            self._spawn(self.cancel_remote, seq, context)
            raise
        finally:
            self.close_call(seq)
        if response.code != 0:
            raise error_from_response(response)
        return response.data

    def stream(
        self,
        action: str,
        data: dict[str, Any] | None = None,
        *,
        context: dict[str, Any] | None = None,
        timeout: float | UseDefault | None = USE_DEFAULT,
    ) -> StreamCall:
        """Call a streaming ``action``; iterate the result (``timeout`` applies per item)."""
        limit = self.default_timeout if isinstance(timeout, UseDefault) else timeout
        traced = tracing.active()
        trace = None if traced is None else traced.carrier()
        return StreamCall(self, action, data or {}, context, limit, trace=trace)

    async def cancel_remote(self, seq: int, context: dict[str, Any] | None) -> None:
        """Best effort: ask the peer to stop ``seq``; its answer is not awaited."""
        if self._closed.is_set():
            return
        try:
            await self._send(Request(self._take_seq(), CANCEL, {"seq_id": seq}, context).to_wire())
        except RPCError:
            pass

    async def send_file(
        self,
        content: bytes,
        *,
        suffix: str = "",
        context: dict[str, Any] | None = None,
        chunk_bytes: int | None = None,
        parallel: int = 16,
    ) -> str:
        """Send ``content`` as ``__file_chunk`` calls, ``parallel`` at a time; return its key."""
        import base64

        chunk_bytes = chunk_bytes or self.file_chunk_bytes
        key = new_file_key(suffix)
        amount = max(1, -(-len(content) // chunk_bytes))
        limiter = anyio.CapacityLimiter(parallel)
        view = memoryview(content)

        async def send_chunk(index: int) -> None:
            async with limiter:
                piece = view[index * chunk_bytes : (index + 1) * chunk_bytes]
                await self.call(
                    FILE_CHUNK,
                    {
                        "file_key": key,
                        "file_length": len(content),
                        "chunk_base64": base64.b64encode(piece).decode("ascii"),
                        "chunk_index": index,
                        "chunk_amount": amount,
                        "chunk_size": len(piece),
                    },
                    context=context,
                )

        async with anyio.create_task_group() as tg:
            for index in range(amount):
                tg.start_soon(send_chunk, index)
        return key

    # ------------------------------------------------------------------ receiving

    async def _receive_loop(self) -> None:
        receive = self.transport.receive
        # A WebSocket transport can hand frames over as it reads them (one event-loop
        # turn earlier than ``receive``); what it cannot still comes through ``receive``.
        push_to = getattr(receive, "push_to", None)
        if push_to is not None:
            push_to(self._take)
        try:
            while True:
                try:
                    item = await receive.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
                self._take(item)
        finally:
            if push_to is not None:
                push_to(None)

    def _take(self, item: ReceivedItem) -> None:
        """One received frame (or the error of one that could not be read)."""
        if isinstance(item, RPCError):
            logger.warning("%s: unreadable frame: %s", self.name, item.message)
            seq = item.details.pop("seq_id", -1)
            self._refuse_frame(item, seq, is_request=item.details.pop("request", True))
            return
        if (
            len(item) * 4 > self.max_message_bytes
            and len(item.encode("utf-8")) > self.max_message_bytes
        ):
            self._reject_oversized(item)
            return
        try:
            frame = parse_frame(item)
        except MalformedMessageError as exc:
            self._refuse_malformed(exc)
            return
        if isinstance(frame, Response):
            self._route_response(frame)
        else:
            self._dispatch(frame)

    def _reject_oversized(self, text: str) -> None:
        seq, is_request = frame_hint(text)
        size = len(text.encode("utf-8"))
        logger.warning("%s: refused a %d-byte frame", self.name, size)
        error = MessageTooLargeError(
            f"frame of {size} bytes exceeds the {self.max_message_bytes}-byte limit",
            details={"limit": self.max_message_bytes, "actual": size},
        )
        self._refuse_frame(error, seq, is_request=is_request)

    def _refuse_frame(self, error: RPCError, seq: int, *, is_request: bool) -> None:
        """Answer a frame that could not be read, or fail our call it was the answer to."""
        inbox = self._pending.get(seq)
        if inbox is not None and not is_request:
            inbox.fail(error)  # an unreadable response to one of our calls
            return
        self._spawn(self._respond_quietly, error_response(seq, error))

    def _refuse_malformed(self, error: MalformedMessageError) -> None:
        """A frame ``parse_frame`` refused: answer a request (at its ``seq_id``, or -1
        when none could be read), fail the call a response was for, drop the rest."""
        seq = error.details.pop("seq_id", -1)
        is_request = error.details.pop("request", True)
        logger.warning("%s: refused a frame (%s): %s", self.name, error.code, error.message)
        if is_request:
            self._spawn(self._respond_quietly, error_response(seq, error))
            return
        inbox = self._pending.get(seq)
        if inbox is not None:
            inbox.fail(error)

    def _route_response(self, response: Response) -> None:
        inbox = self._pending.get(response.seq_id)
        if inbox is None:
            return  # an answer to an ack or cancel, or to a call that already gave up
        inbox.put(response)
        if inbox.flow_controlled and len(inbox) > 2 * self.stream_window + 2:
            inbox.fail(MalformedMessageError("peer ignored the stream flow-control window"))

    def _dispatch(self, request: Request) -> None:
        action = request.action
        if action in CONTROL_ACTIONS:
            if action != PING or not self._pong_now(request.seq_id):
                self._spawn(self._serve_control, request)
            return
        route = self.dispatcher.resolve(action) if self.dispatcher is not None else None
        if route is None:
            error = ActionNotFoundError(
                f"action {action} is not served here", details={"action": action}
            )
            self._spawn(self._respond_quietly, error_response(request.seq_id, error))
            return
        if len(self._running) >= self.max_inflight + self.max_queued:
            error = TooManyRequestsError(
                f"connection is busy: {self.max_inflight} actions in flight and "
                f"{self.max_queued} waiting",
                details={"limit": self.max_inflight, "queued": self.max_queued},
            )
            self._spawn(self._respond_quietly, error_response(request.seq_id, error))
            return
        if request.seq_id in self._running:
            error = MalformedMessageError(f"seq_id {request.seq_id} is already in flight")
            self._spawn(self._respond_quietly, error_response(request.seq_id, error))
            return
        running = _Running(scope=anyio.CancelScope(), context=request.context)
        if route.stream and request.stream_flow_control:
            running.window = _Window(self.stream_window, request.context)
        self._running[request.seq_id] = running
        if self._active < self.max_inflight:
            self._active += 1
            self._spawn(self._serve_request, request, route, running)
        else:
            self._waiting.append((request, route, running))

    def _pong_now(self, seq: int) -> bool:
        """Answer a ``__ping`` from the receive loop when the transport can send without
        waiting (``send_nowait``), saving the task and its event-loop turn; ``False``
        leaves it to :meth:`_serve_control` (the receive loop itself never waits)."""
        send_nowait = getattr(self.transport.send, "send_nowait", None)
        if send_nowait is None or self._closed.is_set():
            return False
        return bool(send_nowait(dumps(Response(seq, data={"message": "pong"}).to_wire())))

    def _admit_waiting(self) -> None:
        """Start queued requests while slots are free (skipping ones the peer cancelled)."""
        while self._waiting and self._active < self.max_inflight:
            request, route, running = self._waiting.popleft()
            if running.scope.cancel_called:
                self._running.pop(request.seq_id, None)
                continue
            self._active += 1
            self._spawn(self._serve_request, request, route, running)

    async def _serve_request(self, request: Request, route: Route, running: _Running) -> None:
        ctx = RequestContext(self, request)
        seq = request.seq_id
        serving(request)  # what this task's log lines name (rpc.log_context)
        try:
            with running.scope:
                try:
                    if route.stream:
                        await self._serve_stream(ctx, route, running.window)
                    else:
                        result = await route.handler(ctx)  # type: ignore[misc]
                        await self._respond(Response(seq, data=result))  # type: ignore[arg-type]
                        if request.stream_flow_control:
                            # Called as a stream: end it, so the caller never waits forever.
                            await self._respond(Response(seq, chunk_status=END))
                except Exception as exc:
                    if isinstance(exc, ConnectionClosedError) and self.closed:
                        return  # our own link is gone: nobody to answer
                    if attached_details(exc):  # explained to the caller (wire_errors)
                        logger.debug("%s: action %s failed: %r", self.name, request.action, exc)
                    elif not isinstance(exc, RPCError):
                        logger.exception("%s: action %s failed", self.name, request.action)
                    await self._respond_quietly(error_response(seq, exc))
        finally:
            self._running.pop(seq, None)
            self._active -= 1
            self._admit_waiting()

    async def _serve_stream(
        self, ctx: RequestContext, route: Route, window: _Window | None
    ) -> None:
        seq = ctx.request.seq_id
        items: AsyncIterator[dict[str, Any]] = route.handler(ctx)  # type: ignore[assignment]
        try:
            while True:
                if window is not None:
                    await window.wait_for_room()
                try:
                    item = await anext(items)
                except StopAsyncIteration:
                    break
                index: int | None = None
                if window is not None:
                    window.sent += 1
                    index = window.sent
                # an item that cannot be sent ends the stream with that error
                await self._send(
                    Response(seq, data=item, chunk_status=CONTINUE, stream_index=index).to_wire()
                )
        finally:
            aclose = getattr(items, "aclose", None)
            if aclose is not None:
                with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                    await aclose()
        await self._respond(Response(seq, chunk_status=END))

    async def _serve_control(self, request: Request) -> None:
        seq, data = request.seq_id, request.data
        try:
            if request.action == PING:
                result: dict[str, Any] = {"message": "pong"}
            elif request.action == HEARTBEAT:
                result = {}
            elif request.action == STREAM_ACK:
                target, index = data.get("seq_id"), data.get("index")
                if not isinstance(target, int) or not isinstance(index, int):
                    raise MalformedMessageError("__stream_ack needs integer seq_id and index")
                running = self._running.get(target)
                window = running.window if running is not None else None
                accepted = window is not None and window.context == request.context
                if accepted and window is not None:
                    if index > window.sent:
                        raise MalformedMessageError(f"ack of item {index}, only {window.sent} sent")
                    window.ack(index)
                result = {"accepted": accepted}
            elif request.action == CANCEL:
                target = data.get("seq_id")
                if not isinstance(target, int):
                    raise MalformedMessageError("__cancel_action needs an integer seq_id")
                running = self._running.get(target)
                cancelled = running is not None and running.context == request.context
                if cancelled and running is not None:
                    running.scope.cancel()
                result = {"cancelled": cancelled}
            else:  # FILE_CHUNK
                self.files.add_chunk(data)
                result = {}
            await self._respond(Response(seq, data=result))
        except ConnectionClosedError:
            pass
        except RPCError as exc:
            await self._respond_quietly(error_response(seq, exc))
