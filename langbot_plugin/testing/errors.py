"""What the harness raises when it cannot do what a test asked, and how a failure of
the plugin's own code reaches the test: the error the plugin raised, as its class on
the wire, with the plugin's frames as a note (pytest prints notes under the error)."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

from langbot_plugin.protocol.control_link import ListenerFailure
from langbot_plugin.rpc import RemoteError, RPCError
from langbot_plugin.rpc.errors import error_class_for_code

__all__ = ["HarnessError", "listener_error", "plugin_frames"]


class HarnessError(Exception):
    """The plugin cannot be loaded or started, or a call cannot be made as asked
    (no such runner, two runners and none named...). The message says which."""


@contextmanager
def plugin_frames() -> Generator[None]:
    """An error from the plugin that says where its code raised carries that as a note."""
    try:
        yield
    except RPCError as exc:
        trace = exc.details.get("traceback")
        if trace and str(trace) not in getattr(exc, "__notes__", ()):
            exc.add_note(str(trace))
        raise


def listener_error(failure: ListenerFailure) -> RPCError:
    """The error a plugin's listener raised, as the class of its code."""
    cls = error_class_for_code(failure.code) or RemoteError
    if cls is RemoteError:
        return RemoteError(failure.error, remote_code=failure.code, details=failure.details)
    return cls.from_wire(failure.error, code=failure.code, details=failure.details, retryable=False)
