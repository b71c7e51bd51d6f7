"""Zip archives with hand-made headers, for the tests of hostile packages."""

from __future__ import annotations

import struct

__all__ = ["CENTRAL", "patch_central"]

CENTRAL = b"PK\x01\x02"


def patch_central(content: bytes, name: str, **fields: int) -> bytes:
    """Rewrite fields of ``name``'s central directory record (what zipfile trusts)."""
    offsets = {"flag_bits": (8, "<H"), "crc": (16, "<I"), "file_size": (24, "<I")}
    data = bytearray(content)
    at = data.find(CENTRAL)
    while at >= 0:
        length = struct.unpack_from("<H", data, at + 28)[0]
        if bytes(data[at + 46 : at + 46 + length]) == name.encode():
            for field, value in fields.items():
                offset, fmt = offsets[field]
                struct.pack_into(fmt, data, at + offset, value)
            return bytes(data)
        at = data.find(CENTRAL, at + 4)
    raise AssertionError(f"{name} is not in the central directory")
