"""Receiving files sent as ``__file_chunk`` actions.

A sender cuts a file into base64 chunks, each a ``__file_chunk`` call carrying
``file_key``, ``file_length``, ``chunk_index``, ``chunk_amount`` and ``chunk_base64``;
the business action that follows names only the ``file_key``. Reference peers send
16 KiB chunks one at a time; ours pipeline them. The store accepts any chunk size up to
its limit, in any order, and hands a completed file out exactly once.
"""

from __future__ import annotations

import binascii
import re
import time
from dataclasses import dataclass, field
from typing import Any

from langbot_plugin.rpc.errors import (
    InvalidParamsError,
    MessageTooLargeError,
    NotFoundError,
    NotReadyError,
    TooManyRequestsError,
)

__all__ = ["REFERENCE_CHUNK_BYTES", "FileStore", "new_file_key"]

#: Chunk size reference peers send and accept.
REFERENCE_CHUNK_BYTES = 16 * 1024
_KEY = re.compile(r"^[A-Za-z0-9_.\-]{1,200}$")


def new_file_key(suffix: str = "") -> str:
    import uuid

    clean = suffix.strip(".")
    if clean and not re.fullmatch(r"[A-Za-z0-9]{1,16}", clean):
        raise InvalidParamsError(f"invalid file suffix {suffix!r}")
    return f"ft1_{uuid.uuid4().hex}{uuid.uuid4().hex}" + (f".{clean}" if clean else "")


@dataclass
class _Transfer:
    length: int
    amount: int
    chunks: dict[int, bytes] = field(default_factory=dict[int, bytes])
    received: int = 0
    touched: float = field(default_factory=time.monotonic)


def _int_field(data: dict[str, Any], name: str) -> int:
    value = data.get(name)
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidParamsError(f"{name} must be an integer")
    return value


class FileStore:
    """Bounded in-memory reassembly of chunked file transfers."""

    def __init__(
        self,
        *,
        max_file_bytes: int = 128 * 1024 * 1024,
        max_total_bytes: int = 256 * 1024 * 1024,
        max_chunk_bytes: int = 4 * 1024 * 1024,
        max_transfers: int = 128,
        ttl_seconds: float = 600.0,
    ) -> None:
        self.max_file_bytes = max_file_bytes
        self.max_total_bytes = max_total_bytes
        self.max_chunk_bytes = max_chunk_bytes
        self.max_transfers = max_transfers
        self.ttl_seconds = ttl_seconds
        self._transfers: dict[str, _Transfer] = {}
        self._complete: dict[str, tuple[bytes, float]] = {}

    def _held_bytes(self) -> int:
        return sum(t.received for t in self._transfers.values()) + sum(
            len(b) for b, _ in self._complete.values()
        )

    def _expire(self) -> None:
        cutoff = time.monotonic() - self.ttl_seconds
        for key in [k for k, t in self._transfers.items() if t.touched < cutoff]:
            del self._transfers[key]
        for key in [k for k, (_, t) in self._complete.items() if t < cutoff]:
            del self._complete[key]

    def add_chunk(self, data: dict[str, Any]) -> None:
        """Store one chunk (the ``data`` of a ``__file_chunk`` request)."""
        key = data.get("file_key")
        if not isinstance(key, str) or not _KEY.match(key):
            raise InvalidParamsError("file_key must be 1-200 letters, digits, '.', '_' or '-'")
        length = _int_field(data, "file_length")
        index = _int_field(data, "chunk_index")
        amount = _int_field(data, "chunk_amount")
        encoded = data.get("chunk_base64")
        if not isinstance(encoded, str):
            raise InvalidParamsError("chunk_base64 must be a string")
        if not 0 <= length <= self.max_file_bytes:
            raise MessageTooLargeError(
                f"file of {length} bytes exceeds the {self.max_file_bytes}-byte limit",
                details={"limit": self.max_file_bytes, "actual": length},
            )
        if amount <= 0 or not 0 <= index < amount:
            raise InvalidParamsError(f"chunk_index {index} outside 0..{amount - 1}")
        if len(encoded) > (self.max_chunk_bytes + 2) // 3 * 4:
            raise MessageTooLargeError(
                f"chunk exceeds {self.max_chunk_bytes} bytes",
                details={"limit": self.max_chunk_bytes},
            )
        try:
            chunk = binascii.a2b_base64(encoded, strict_mode=True)
        except (binascii.Error, ValueError) as exc:
            raise InvalidParamsError(f"chunk_base64 is not base64: {exc}") from None

        self._expire()
        transfer = self._transfers.get(key)
        if transfer is None:
            if key in self._complete:
                raise InvalidParamsError(f"file {key} is already complete")
            if len(self._transfers) >= self.max_transfers:
                raise TooManyRequestsError(
                    f"{self.max_transfers} file transfers already in progress",
                    details={"limit": self.max_transfers},
                )
            transfer = _Transfer(length=length, amount=amount)
            self._transfers[key] = transfer
        elif transfer.length != length or transfer.amount != amount:
            raise InvalidParamsError(f"chunk of {key} disagrees on file_length or chunk_amount")
        if index in transfer.chunks:
            raise InvalidParamsError(f"chunk {index} of {key} was already received")
        if transfer.received + len(chunk) > length:
            del self._transfers[key]
            raise InvalidParamsError(f"chunks of {key} exceed the declared {length} bytes")
        if self._held_bytes() + len(chunk) > self.max_total_bytes:
            raise TooManyRequestsError(
                "file transfer memory is full", details={"limit": self.max_total_bytes}
            )
        transfer.chunks[index] = chunk
        transfer.received += len(chunk)
        transfer.touched = time.monotonic()
        if len(transfer.chunks) == amount:
            del self._transfers[key]
            if transfer.received != length:
                raise InvalidParamsError(
                    f"file {key} has {transfer.received} bytes, {length} were declared"
                )
            content = b"".join(transfer.chunks[i] for i in range(amount))
            self._complete[key] = (content, time.monotonic())

    def take(self, key: str) -> bytes:
        """Hand out a completed file once; it is forgotten afterwards."""
        entry = self._complete.pop(key, None)
        if entry is not None:
            return entry[0]
        if key in self._transfers:
            raise NotReadyError(f"file {key} is still being transferred")
        raise NotFoundError(f"no file with key {key}")

    def discard(self, key: str) -> None:
        self._transfers.pop(key, None)
        self._complete.pop(key, None)
