"""Coalescing the frames written in one event-loop turn into one transport write.

Under load a session writes many frames in one turn of the event loop (every request
task that finishes in that turn sends its answer), and each write to an idle socket or
pipe is one system call. A :class:`TurnBatch` lets the first frame of a turn go out at
once (a lone frame is never delayed) and holds the ones written after it in that turn,
which the transport then writes together at the end of the turn (``loop.call_soon``,
never a timer, and only when other callbacks run in that turn), or at once when
``limit`` bytes are waiting: what is held is bounded, and beyond it the transport's own
flow control (its high-water mark, which the writers wait on) applies as before.
Frames are whole when held, so a writer cancelled after handing one over cannot cut the
stream: the frame goes out whole, in order.

The byte format is the transport's own (one WebSocket message per frame, one line per
frame on stdio); only the number of system calls changes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["TURN_FLUSH_BYTES", "TurnBatch"]

#: Bytes held back within one turn before they are written at once. Small enough that
#: the next process of a chain (host, runtime, plugin) gets the first frames of a burst
#: while this one still works on the rest (a dozen call_tool frames; 64 KiB held a whole
#: burst back), large enough that a burst costs one system call per dozen frames.
TURN_FLUSH_BYTES = 8 * 1024


def _others_ready(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether other callbacks run in this turn of ``loop`` (so more frames may follow).

    When none does, a turn's first frame is written with nothing scheduled after it: an
    end-of-turn callback would cost the loop one more turn (a poll of the selector)
    on every lone frame, a tenth of a loopback ping. asyncio's loops keep the callbacks
    of the turn in ``_ready``; a loop without it is taken as always busy."""
    ready = getattr(loop, "_ready", None)
    return True if ready is None else bool(ready)


class TurnBatch:
    """When a transport writes what it holds: the turn's first frame at once, the others
    at the end of the turn (or once ``limit`` bytes wait). ``flush`` writes what the
    transport holds in one write."""

    __slots__ = ("_flush", "_limit", "_waiting")

    def __init__(self, flush: Callable[[], None], *, limit: int = TURN_FLUSH_BYTES) -> None:
        self._flush = flush
        self._limit = limit
        #: bytes held since the turn's first frame; ``None`` outside a turn with writes
        self._waiting: int | None = None

    def wrote(self, size: int) -> None:
        """A frame of ``size`` bytes was handed to the transport: write it now when it
        is the turn's first (or when the held bytes reach the limit), else hold it."""
        if self._waiting is None:
            self._flush()
            loop = asyncio.get_running_loop()
            if _others_ready(loop):
                self._waiting = 0
                loop.call_soon(self._end_of_turn)
            return
        self._waiting += size
        if self._waiting >= self._limit:
            self._waiting = 0
            self._flush()

    def _end_of_turn(self) -> None:
        held, self._waiting = self._waiting, None
        if held:
            self._flush()
