"""The context in which a transport hands frames to a session from a data callback.

WebSocket (and pipe) transports give frames to the session in the protocol's data
callback, one event-loop turn before a receive task would (``push_to``). A data callback
runs on the loop but in no task, and handling a request there makes anyio objects (the
request's cancel scope). anyio asks sniffio which library runs when sniffio is installed,
and sniffio recognises asyncio only inside a task or where its context variable says so:
``anyio.run`` sets the variable, ``asyncio.run`` does not. The released LangBot host runs
on ``asyncio.run`` and always has sniffio (its LLM clients depend on it), so there every
request handed over from a callback raised ``NoEventLoopError`` and was never answered.
:func:`callback_context` is the caller's context with the variable set: our transports
are asyncio's, whoever started the loop.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from functools import partial
from typing import Any

try:
    import sniffio
except ImportError:  # then anyio finds the running asyncio loop by itself
    sniffio = None

__all__ = ["callback_context", "in_callback_context"]


def callback_context() -> contextvars.Context:
    """A copy of the current context that names asyncio as the running async library."""
    context = contextvars.copy_context()
    if sniffio is not None:
        context.run(sniffio.current_async_library_cvar.set, "asyncio")
    return context


def in_callback_context(sink: Callable[[Any], object]) -> Callable[[Any], object]:
    """``sink`` run in one :func:`callback_context` taken now (each call in the same one,
    as a receive task's frames all run in its own context)."""
    return partial(callback_context().run, sink)
