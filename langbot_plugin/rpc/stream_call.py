"""The caller's side of calls: waiting for answers, and streamed calls.

:class:`StreamCall` is what :meth:`RPCSession.stream` returns; it starts the call on
first iteration, acknowledges items as they are consumed (flow control), and cancels
the peer's handler when the caller stops early.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from types import TracebackType
from typing import Any, Protocol, Self

import anyio

from langbot_plugin.rpc.envelope import END, Request, Response
from langbot_plugin.rpc.errors import MalformedMessageError, RPCError, RPCTimeoutError
from langbot_plugin.rpc.wire_errors import error_from_response

__all__ = ["USE_DEFAULT", "Inbox", "Outbound", "Reply", "StreamCall", "UseDefault"]


class UseDefault:
    """Marker type: "use the session's default timeout"."""

    __slots__ = ()


USE_DEFAULT = UseDefault()


class Reply:
    """The answer to one unary call: a future resolved once (cheaper than an inbox).

    A failure is kept beside the future rather than set on it: the session may fail a
    reply whose caller already left (its send failed), and an exception stored on a
    future nobody awaits is reported as "never retrieved".
    """

    __slots__ = ("_future", "failure", "flow_controlled")

    def __init__(self) -> None:
        self._future: asyncio.Future[Response | None] = asyncio.get_running_loop().create_future()
        self.failure: RPCError | None = None
        self.flow_controlled = False

    def __len__(self) -> int:
        return 0

    def put(self, item: Response) -> None:
        if not self._future.done():
            self._future.set_result(item)

    def fail(self, error: RPCError) -> None:
        if not self._future.done():
            self.failure = error
            self._future.set_result(None)

    async def get(self) -> Response:
        answer = await self._future
        if answer is None:
            assert self.failure is not None
            raise self.failure
        return answer


class Inbox:
    """Responses for one outgoing call, in arrival order (unbounded; see flow control)."""

    __slots__ = ("_event", "_items", "failure", "flow_controlled")

    def __init__(self) -> None:
        self._items: deque[Response] = deque()
        self._event = asyncio.Event()  # resettable, unlike anyio's; the RPC layer runs on asyncio
        self.failure: RPCError | None = None
        self.flow_controlled = False

    def __len__(self) -> int:
        return len(self._items)

    def put(self, item: Response) -> None:
        self._items.append(item)
        self._event.set()

    def fail(self, error: RPCError) -> None:
        if self.failure is None:
            self.failure = error
        self._event.set()

    async def get(self) -> Response:
        while not self._items:
            if self.failure is not None:
                raise self.failure
            self._event.clear()
            await self._event.wait()
        return self._items.popleft()


class Outbound(Protocol):
    """What a :class:`StreamCall` needs from its session (:class:`~.session.RPCSession`
    implements it): numbered requests whose answers reach an :class:`Inbox`, acks and
    cancels. Nothing else of the session is visible to a stream."""

    @property
    def ack_every(self) -> int:
        """Acknowledge after this many consumed items."""
        ...

    def open_call(self, inbox: Inbox | Reply) -> int:
        """Reserve a sequence number whose responses go to ``inbox``."""
        ...

    def close_call(self, seq: int) -> None:
        """Stop routing responses of ``seq`` (idempotent)."""
        ...

    async def send_request(self, request: Request) -> None:
        """Send one request frame; raises the session's error when it is closed."""
        ...

    async def acknowledge(self, seq: int, index: int, context: dict[str, Any] | None) -> None:
        """Tell the producer of stream ``seq`` that ``index`` items were consumed."""
        ...

    async def cancel_remote(self, seq: int, context: dict[str, Any] | None) -> None:
        """Best effort: ask the peer to stop serving ``seq``."""
        ...


class StreamCall:
    """The caller's side of a streamed call: ``async with`` it, then ``async for`` items.

    Leaving the block (or :meth:`aclose`) before the stream ended cancels the peer's
    handler. Iterating without ``async with`` works too; then call :meth:`aclose` when
    stopping early.
    """

    def __init__(
        self,
        session: Outbound,
        action: str,
        data: dict[str, Any],
        context: dict[str, Any] | None,
        timeout: float | None,
        *,
        trace: dict[str, str] | None = None,
    ) -> None:
        self._session = session
        self.action = action
        self._data = data
        self._context = context
        self._timeout = timeout
        self._trace = trace
        self._seq: int | None = None
        self._inbox = Inbox()
        self._inbox.flow_controlled = True
        self._consumed = 0
        self._acked = 0
        self._done = False

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __aiter__(self) -> Self:
        return self

    async def _start(self) -> None:
        self._seq = self._session.open_call(self._inbox)
        request = Request(
            self._seq,
            self.action,
            self._data,
            self._context,
            stream_flow_control=True,
            trace=self._trace,
        )
        await self._session.send_request(request)

    async def __anext__(self) -> dict[str, Any]:
        if self._done:
            raise StopAsyncIteration
        session = self._session
        try:
            with anyio.fail_after(self._timeout if self._timeout is not None else math.inf):
                if self._seq is None:
                    await self._start()
                elif self._consumed - self._acked >= session.ack_every:
                    self._acked = self._consumed
                    await session.acknowledge(self._seq, self._consumed, self._context)
                response = await self._inbox.get()
        except TimeoutError:
            await self.aclose()
            raise RPCTimeoutError(
                f"{self.action} stream got no item within {self._timeout} s",
                details={"action": self.action, "timeout": self._timeout},
            ) from None
        except RPCError:
            await self._finish()
            raise
        if response.code != 0:
            await self._finish()
            raise error_from_response(response)
        if response.chunk_status == END:
            await self._finish()
            raise StopAsyncIteration
        if response.stream_index is not None:
            if response.stream_index != self._consumed + 1:
                await self.aclose()
                raise MalformedMessageError(
                    f"stream item {response.stream_index} arrived, {self._consumed + 1} expected"
                )
            self._consumed = response.stream_index
        return response.data

    async def _finish(self) -> None:
        self._done = True
        if self._seq is not None:
            self._session.close_call(self._seq)

    async def aclose(self) -> None:
        """Stop early: forget the stream and ask the peer to cancel its handler."""
        if self._done:
            return
        await self._finish()
        if self._seq is not None:
            with anyio.CancelScope(shield=True):
                await self._session.cancel_remote(self._seq, self._context)

    async def collect(self) -> list[dict[str, Any]]:
        """Read the whole stream into a list."""
        async with self:
            return [item async for item in self]
