"""Generic bidirectional action RPC: envelope, session, errors and transports.

This package knows nothing about LangBot; :mod:`langbot_plugin.protocol` declares the
actions that travel over it.
"""

from langbot_plugin.rpc import errors as _errors
from langbot_plugin.rpc.envelope import Request, Response, parse_frame
from langbot_plugin.rpc.errors import *  # noqa: F403  (every error class, as errors.__all__)
from langbot_plugin.rpc.files import FileStore
from langbot_plugin.rpc.routes import Dispatcher, RequestContext, Route, RouteTable
from langbot_plugin.rpc.session import RPCSession
from langbot_plugin.rpc.stream_call import StreamCall
from langbot_plugin.rpc.transport import Transport

__all__ = [
    "Dispatcher",
    "FileStore",
    "RPCSession",
    "Request",
    "RequestContext",
    "Response",
    "Route",
    "RouteTable",
    "StreamCall",
    "Transport",
    "parse_frame",
]
__all__ += _errors.__all__
