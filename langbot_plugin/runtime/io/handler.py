"""The host's end of a runtime link: :class:`Handler`, a face over the RPC session.

A host builds one per connection (``Handler(connection, disconnect_callback)``),
registers what it serves with ``@handler.action(RuntimeToLangBotAction.X)`` (returning
an :class:`ActionResponse`, or an async generator of them), runs it (``await
handler.run()``) and calls the runtime with :meth:`Handler.call_action` /
:meth:`Handler.call_action_generator`. Everything on the wire is the session's; this
module adds the reference's names and its envelope scopes: an inbound request's
``context`` is parsed, checked by :meth:`Handler.validate_inbound_action_context` and
visible as :attr:`Handler.current_action_context`; an outbound call carries
:meth:`Handler.resolve_outbound_action_context` (explicit, else the request being
served, else the connection's bound one). ``handler.actions`` is read on every request,
so a host may wrap an entry after registering it. The session is created on first use,
so a handler can be built without a running loop; :attr:`Handler.resp_waiters` is the
reference's map of outbound unary calls, and a subclass may override
:meth:`Handler.dispatcher`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import logging
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterator,
    Mapping,
)
from typing import Any, Protocol

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream

from langbot_plugin.entities.io.context import (
    ActionContext,
    ActionEnvelopeContext,
    InstallationBinding,
    parse_action_envelope_context,
)
from langbot_plugin.entities.io.errors import (
    ActionCallError,
    ActionCallTimeoutError,
    ConnectionClosedError,
)
from langbot_plugin.entities.io.resp import ActionResponse, ChunkStatus
from langbot_plugin.rpc.envelope import Response
from langbot_plugin.rpc.errors import InvalidParamsError, RemoteError, RPCError, RPCTimeoutError
from langbot_plugin.rpc.files import FileStore
from langbot_plugin.rpc.routes import Dispatcher, RequestContext, Route
from langbot_plugin.rpc.session import RPCSession
from langbot_plugin.rpc.transport import ReceivedItem, Transport
from langbot_plugin.runtime.io.connection import Connection, TransportConnection

__all__ = [
    "FILE_STORAGE_DIR",
    "SHARED_WORKER_FILE_STORAGE_DIR",
    "ActionFunction",
    "ActionResponse",
    "ChunkStatus",
    "Handler",
    "ResponseWaiter",
]

logger = logging.getLogger("langbot_plugin.runtime.io")

#: The reference keeps received files in these directories; a host reads them to align
#: its environment with a shared runtime. Files are held in memory here.
FILE_STORAGE_DIR = "data/temp/lbp"
SHARED_WORKER_FILE_STORAGE_DIR = "/tmp/lbp-rpc"

ActionFunction = Callable[[dict[str, Any]], Any]
DisconnectCallback = Callable[["Handler"], Awaitable[bool]]


class _Named(Protocol):
    @property
    def value(self) -> str: ...


def _action_name(action: _Named | str) -> str:
    return action if isinstance(action, str) else str(action.value)


def _context_dict(context: ActionEnvelopeContext | None) -> dict[str, Any] | None:
    return None if context is None else context.model_dump(exclude_none=True)


class HostActionError(RPCError):
    """An action served by the host answered ``ActionResponse.error``."""


def _answer(response: object, action: str) -> dict[str, Any]:
    if not isinstance(response, ActionResponse):
        raise TypeError(f"action {action} returned {type(response).__name__}, not ActionResponse")
    if response.code != 0:
        raise HostActionError(response.message, details=response.data)
    return response.data


def _wire_message(error: RPCError) -> str:
    if error.peer_message is not None:  # the runtime's words, as the reference's Handler
        return error.peer_message
    return (
        error.message if isinstance(error, RemoteError) else f"{error.wire_type}: {error.message}"
    )


@contextlib.contextmanager
def _call_errors(name: str) -> Generator[None]:
    """The RPC core's errors of a call, as the host library's classes."""
    try:
        yield
    except RPCTimeoutError as exc:
        raise ActionCallTimeoutError(f"Action {name} call timed out", details=exc.details) from exc
    except ConnectionClosedError:
        raise
    except RPCError as exc:
        raise ActionCallError(_wire_message(exc), exc.details) from exc


class _OverConnection:
    """A stream end over a reference-shaped :class:`Connection`; closing it closes that."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    async def aclose(self) -> None:
        await self._connection.close()


class _ConnectionReceiver(_OverConnection, ObjectReceiveStream[ReceivedItem]):
    async def receive(self) -> ReceivedItem:
        try:
            return await self._connection.receive()
        except ConnectionClosedError:
            raise anyio.EndOfStream from None


class _ConnectionSender(_OverConnection, ObjectSendStream[str]):
    async def send(self, item: str) -> None:
        try:
            await self._connection.send(item)
        except ConnectionClosedError:
            raise anyio.BrokenResourceError from None


def _transport_of(connection: Connection) -> Transport:
    if isinstance(connection, TransportConnection):
        return connection.transport
    return Transport(receive=_ConnectionReceiver(connection), send=_ConnectionSender(connection))


class ResponseWaiter:
    """One outbound unary call waiting for its answer (the reference's response future)."""

    __slots__ = ("_session", "seq_id")

    def __init__(self, session: RPCSession, seq_id: int) -> None:
        self._session = session
        self.seq_id = seq_id

    def done(self) -> bool:
        return self.seq_id not in self._session.waiting_calls()

    def set_result(self, response: ActionResponse) -> None:
        """Answer the call with ``response``, as if the peer had sent it."""
        answer = Response(
            self.seq_id, code=response.code, message=response.message, data=response.data
        )
        if not self._session.deliver(answer):
            raise asyncio.InvalidStateError(f"call {self.seq_id} is no longer waiting")


class _ResponseWaiters(Mapping[int, ResponseWaiter]):
    """``seq_id`` -> :class:`ResponseWaiter` of the session's waiting unary calls."""

    def __init__(self, session: RPCSession | None) -> None:
        self._session = session

    def _seqs(self) -> list[int]:
        return [] if self._session is None else self._session.waiting_calls()

    def __getitem__(self, seq_id: int) -> ResponseWaiter:
        if self._session is None or seq_id not in self._seqs():
            raise KeyError(seq_id)
        return ResponseWaiter(self._session, seq_id)

    def __iter__(self) -> Iterator[int]:
        return iter(self._seqs())

    def __len__(self) -> int:
        return len(self._seqs())


class _Actions:
    """The session's dispatcher: routes each request to ``handler.actions``."""

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        #: action -> (the function registered, its route): built once per function
        self._built: dict[str, tuple[ActionFunction, Route]] = {}

    def resolve(self, action: str) -> Route | None:
        function = self._handler.actions.get(action)
        if function is None:
            return None
        built = self._built.get(action)
        if built is not None and built[0] is function:
            return built[1]
        if inspect.isasyncgenfunction(function):
            route = Route(self._stream(action, function), stream=True)
        else:
            route = Route(self._unary(action, function))
        self._built[action] = (function, route)
        return route

    def _unary(self, action: str, function: ActionFunction) -> Callable[[RequestContext], Any]:
        handler = self._handler

        async def serve(ctx: RequestContext) -> dict[str, Any]:
            with handler.serving(action, ctx.context):
                response = function(ctx.data)
                if inspect.isawaitable(response):
                    response = await response
                return _answer(response, action)

        return serve

    def _stream(self, action: str, function: ActionFunction) -> Callable[[RequestContext], Any]:
        handler = self._handler

        async def serve(ctx: RequestContext) -> AsyncIterator[dict[str, Any]]:
            with handler.serving(action, ctx.context):
                async with contextlib.aclosing(function(ctx.data)) as responses:
                    async for response in responses:
                        yield _answer(response, action)

        return serve


class Handler:
    """One connection's RPC endpoint, with the reference host library's method names."""

    name: str = "Handler"

    def __init__(
        self,
        connection: Connection,
        disconnect_callback: DisconnectCallback | None = None,
        *,
        file_storage_dir: str | None = None,
        max_file_bytes: int | None = None,
        cancel_active_tasks_on_close: bool = True,
    ) -> None:
        if max_file_bytes is not None and (isinstance(max_file_bytes, bool) or max_file_bytes <= 0):
            raise ValueError("max_file_bytes must be a positive integer")
        del file_storage_dir, cancel_active_tasks_on_close  # files stay in memory; tasks always end
        self.conn = connection
        self.actions: dict[str, ActionFunction] = {}
        self._disconnect_callback = disconnect_callback
        self._bound_action_context: ActionEnvelopeContext | None = None
        self._current_action_context: contextvars.ContextVar[ActionEnvelopeContext | None] = (
            contextvars.ContextVar(f"{type(self).__name__}_{id(self)}_context", default=None)
        )
        self._max_file_bytes = max_file_bytes
        self._session: RPCSession | None = None

    @property
    def session(self) -> RPCSession:
        """The connection's RPC session, created on first use (in the loop that runs it)."""
        if self._session is None:
            limit = self._max_file_bytes
            self._session = RPCSession(
                _transport_of(self.conn),
                self.dispatcher(),
                name=self.name,
                default_timeout=None,
                files=FileStore() if limit is None else FileStore(max_file_bytes=limit),
            )
        return self._session

    def dispatcher(self) -> Dispatcher:
        """What serves the peer's requests: ``handler.actions`` (a subclass may override)."""
        return _Actions(self)

    @property
    def resp_waiters(self) -> Mapping[int, ResponseWaiter]:
        """``seq_id`` -> the waiter of each outbound unary call still waiting for its answer."""
        return _ResponseWaiters(self._session)

    # ------------------------------------------------------------------ lifecycle

    def set_disconnect_callback(
        self, disconnect_callback: DisconnectCallback | None = None
    ) -> None:
        self._disconnect_callback = disconnect_callback

    async def run(self) -> None:
        """Serve until the peer goes away or :meth:`close` is called; then tell the
        disconnect callback (its answer is not used: a handler serves one connection)."""
        await self.session.serve()
        if self._disconnect_callback is not None:
            await self._disconnect_callback(self)

    async def close(self) -> None:
        """Stop serving (pending calls fail with ``ConnectionClosedError``) and close the link."""
        self.session.close()
        with contextlib.suppress(RPCError, OSError):
            await self.conn.close()

    @property
    def closed(self) -> bool:
        return self._session is not None and self._session.closed

    # ------------------------------------------------------------------ serving

    def action(self, name: _Named | str) -> Callable[[ActionFunction], ActionFunction]:
        """Register the decorated function as the server of action ``name``."""

        def register(function: ActionFunction) -> ActionFunction:
            self.actions[_action_name(name)] = function
            return function

        return register

    @contextlib.contextmanager
    def serving(self, action: str, context: dict[str, Any] | None) -> Generator[None]:
        """The scope of one inbound request: its checked context is current inside."""
        try:
            parsed = None if context is None else parse_action_envelope_context(context)
            checked = self.validate_inbound_action_context(action, parsed)
        except ValueError as exc:
            raise InvalidParamsError(f"action {action}: {exc}") from None
        token = self._current_action_context.set(checked)
        try:
            with self.action_invocation_scope(action, checked):
                yield
        finally:
            self._current_action_context.reset(token)

    @contextlib.contextmanager
    def action_invocation_scope(
        self, action: str, action_context: ActionEnvelopeContext | None
    ) -> Generator[None]:
        """A hook around each served action (a subclass may bind its own state)."""
        del action, action_context
        yield

    # ------------------------------------------------------------------ contexts

    @property
    def bound_action_context(self) -> ActionEnvelopeContext | None:
        return self._bound_action_context

    @property
    def current_action_context(self) -> ActionEnvelopeContext | None:
        """The context of the request this task is serving (``None`` outside one)."""
        return self._current_action_context.get()

    def bind_action_context(
        self, action_context: ActionEnvelopeContext | dict[str, Any]
    ) -> ActionEnvelopeContext:
        """Bind the connection to one workspace; it may gain an installation once, never
        change workspace, generation, installation or revision."""
        context = parse_action_envelope_context(action_context)
        bound = self._bound_action_context
        if bound is not None:
            if not bound.same_workspace(context):
                raise ValueError("Action connection cannot be rebound to another Workspace")
            if bound.installation_uuid is not None and (
                context.installation_uuid != bound.installation_uuid
            ):
                raise ValueError("Action connection cannot change its plugin installation")
            if isinstance(bound, InstallationBinding) and context != bound:
                raise ValueError(
                    "Action connection cannot change installation revision or artifact"
                )
        self._bound_action_context = context
        return context

    def require_bound_action_context(self) -> ActionEnvelopeContext:
        if self._bound_action_context is None:
            raise ValueError("Plugin Runtime is not bound to a Workspace")
        return self._bound_action_context

    def _check_against_bound(self, context: ActionContext, what: str) -> None:
        bound = self._bound_action_context
        if bound is None:
            return
        if not bound.same_workspace(context):
            raise ValueError(f"{what} context does not match connection Workspace")
        if (
            bound.installation_uuid is not None
            and context.installation_uuid != bound.installation_uuid
        ):
            raise ValueError(f"{what} context does not match connection plugin installation")
        if isinstance(bound, InstallationBinding) and context != bound:
            raise ValueError(f"{what} context does not match installation revision or artifact")

    def validate_inbound_action_context(
        self, action: str, action_context: ActionEnvelopeContext | None
    ) -> ActionEnvelopeContext | None:
        """The context an inbound request runs under: a bound connection's binding (a
        peer cannot switch it), else what the envelope carried."""
        del action
        if action_context is not None:
            self._check_against_bound(action_context, "Action")
        return self._bound_action_context or action_context

    def resolve_outbound_action_context(
        self, action_context: ActionEnvelopeContext | dict[str, Any] | None
    ) -> ActionEnvelopeContext | None:
        """The context an outbound call carries."""
        if action_context is None:
            return self._current_action_context.get() or self._bound_action_context
        context = parse_action_envelope_context(action_context)
        self._check_against_bound(context, "Outbound action")
        return context

    def resolve_effective_action_context(
        self, action_context: ActionEnvelopeContext | dict[str, Any] | None = None
    ) -> ActionEnvelopeContext | None:
        return self.resolve_outbound_action_context(action_context)

    # ------------------------------------------------------------------ calling

    async def call_action(
        self,
        action: _Named | str,
        data: dict[str, Any],
        timeout: float | None = 15.0,
        action_context: ActionEnvelopeContext | dict[str, Any] | None = None,
        cancel_peer_on_cancel: bool = True,
    ) -> dict[str, Any]:
        """Call ``action`` on the peer and return its ``data``.

        Raises :class:`ActionCallTimeoutError` (the peer is asked to stop),
        :class:`ActionCallError` for the peer's error (its typed form as ``__cause__``),
        ``ConnectionClosedError`` when the link is gone. A caller that gives up always
        cancels the peer's work (``cancel_peer_on_cancel`` is accepted and implied).
        """
        del cancel_peer_on_cancel
        name = _action_name(action)
        context = _context_dict(self.resolve_outbound_action_context(action_context))
        with _call_errors(name):
            return await self.session.call(name, data, context=context, timeout=timeout)

    async def call_action_generator(
        self,
        action: _Named | str,
        data: dict[str, Any],
        timeout: float | None = 15.0,
        action_context: ActionEnvelopeContext | dict[str, Any] | None = None,
    ) -> AsyncGenerator[dict[str, Any]]:
        """Call a streaming ``action``; yields each item's ``data`` (``timeout`` per item).
        Closing the generator early cancels the peer's handler."""
        name = _action_name(action)
        context = _context_dict(self.resolve_outbound_action_context(action_context))
        with _call_errors(name):
            async with self.session.stream(name, data, context=context, timeout=timeout) as items:
                async for item in items:
                    yield item

    # ------------------------------------------------------------------ files

    async def send_file(self, file_bytes: bytes, extension: str = "") -> str:
        """Push ``file_bytes`` to the peer in chunks; the key names it in the next call."""
        context = _context_dict(self.resolve_outbound_action_context(None))
        return await self.session.send_file(file_bytes, suffix=extension, context=context)

    async def read_local_file(self, file_key: str) -> bytes:
        """A file the peer pushed (handed out once)."""
        return self.session.files.take(file_key)

    async def delete_local_file(self, file_key: str) -> None:
        """Forget a pushed file (a no-op once it was read)."""
        self.session.files.discard(file_key)
