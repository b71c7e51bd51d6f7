"""Stdio traffic in awkward patterns, to test the relay's framing byte for byte (no MCP).

1. For every stdin line until ``{"go": true}``: one line with the line's length and
   SHA-256 (so the test sees exactly what reached stdin, and in how many lines).
2. Sixty small messages written with a single ``write``.
3. Five big messages (64 KiB to 4 MiB) each written in hundreds of small pieces, then
   blank lines.
4. A burst with CRLF line endings in one ``write``.

Then it waits for the end of stdin. :func:`expected` is what the relay must deliver.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys

SMALL = [1, 2, 3, 10, 100, 1000] * 10
BIG = [65535, 65536, 65537, 1 << 20, 4 << 20]
CRLF = [5, 50, 5000]


def message(index: int, size: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": index, "result": {"t": "x" * size}}).encode()


def expected() -> list[bytes]:
    out = [message(i, s) for i, s in enumerate(SMALL)]
    out += [message(1000 + j, s) for j, s in enumerate(BIG)]
    out += [message(2000 + j, s) for j, s in enumerate(CRLF)]
    return out


def write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(1, view) :]


def main() -> None:
    for raw in sys.stdin.buffer:
        line = raw.rstrip(b"\n")
        if line == b'{"go": true}':
            break
        digest = hashlib.sha256(line).hexdigest()
        write_all(json.dumps({"id": "stdin", "result": [len(line), digest]}).encode() + b"\n")
    write_all(b"".join(message(i, s) + b"\n" for i, s in enumerate(SMALL)))
    for j, size in enumerate(BIG):
        data = message(1000 + j, size) + b"\n"
        step = 777 if size < 1 << 20 else 65521
        for start in range(0, len(data), step):
            write_all(data[start : start + step])
    write_all(b"\n\n")
    write_all(b"".join(message(2000 + j, s) + b"\r\n" for j, s in enumerate(CRLF)))
    sys.stdin.buffer.read()


if __name__ == "__main__":
    main()
