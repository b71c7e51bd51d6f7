"""Action names every session serves itself (never passed to a dispatcher)."""

from __future__ import annotations

__all__ = ["CANCEL", "CONTROL_ACTIONS", "FILE_CHUNK", "HEARTBEAT", "PING", "STREAM_ACK"]

PING = "__ping"
HEARTBEAT = "__heartbeat"
STREAM_ACK = "__stream_ack"
CANCEL = "__cancel_action"
FILE_CHUNK = "__file_chunk"
CONTROL_ACTIONS = frozenset({PING, HEARTBEAT, STREAM_ACK, CANCEL, FILE_CHUNK})
