"""Generic bidirectional action RPC: envelope, session, errors and transports.

This package knows nothing about LangBot; :mod:`langbot_plugin.protocol` declares the
actions that travel over it.
"""

from langbot_plugin.rpc.envelope import Request, Response, parse_frame
from langbot_plugin.rpc.errors import (
    ActionNotFoundError,
    CallCancelledError,
    ConflictError,
    ConnectionClosedError,
    InternalError,
    InvalidParamsError,
    MalformedMessageError,
    MessageTooLargeError,
    NotFoundError,
    NotReadyError,
    NotSupportedError,
    PermissionDeniedError,
    RemoteError,
    RPCError,
    RPCTimeoutError,
    TooManyRequestsError,
    UnauthenticatedError,
)
from langbot_plugin.rpc.files import FileStore
from langbot_plugin.rpc.routes import Dispatcher, RequestContext, Route, RouteTable
from langbot_plugin.rpc.session import RPCSession
from langbot_plugin.rpc.stream_call import StreamCall
from langbot_plugin.rpc.transport import Transport

__all__ = [
    "ActionNotFoundError",
    "CallCancelledError",
    "ConflictError",
    "ConnectionClosedError",
    "Dispatcher",
    "FileStore",
    "InternalError",
    "InvalidParamsError",
    "MalformedMessageError",
    "MessageTooLargeError",
    "NotFoundError",
    "NotReadyError",
    "NotSupportedError",
    "PermissionDeniedError",
    "RPCError",
    "RPCSession",
    "RPCTimeoutError",
    "RemoteError",
    "Request",
    "RequestContext",
    "Response",
    "Route",
    "RouteTable",
    "StreamCall",
    "TooManyRequestsError",
    "Transport",
    "UnauthenticatedError",
    "parse_frame",
]
