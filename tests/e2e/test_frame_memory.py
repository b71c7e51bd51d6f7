"""One 20 MiB frame leaves the real ``lbp rt``'s memory flat, and the runtime up.

Frames above the 16 MiB limit are refused before they are kept: a WebSocket frame from
its header (the connection is closed with 1009, message too big), a chunk-framed stdio
message (the host's framing above 16 KiB) from its ``chunk_start`` (its pieces are
dropped, the request is answered with ``message_too_large``, the connection stays).

This is a memory bound, not a timing: the runtime's peak resident set (``VmHWM`` in
``/proc/<pid>/status``) is read after a warm-up request and again after the big frame.
Keeping the frame costs at least its 20 MiB: with the transports' old 64 MiB limit the
peak grew by 60 MiB over WebSocket and 45 MiB over stdio here, and by 0.3 and 0.0 MiB
with the 16 MiB limit. The bound of 8 MiB leaves room for what serving a connection
allocates, and none for the frame.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import anyio
import pytest

from langbot_plugin.rpc import MessageTooLargeError
from langbot_plugin.rpc.transport_stdio import stdio_transport
from langbot_plugin.rpc.transport_ws import connect_ws
from langbot_plugin.stack import start_runtime
from tests.conftest import raw_exchange
from tests.e2e.processes import lbp_rt

pytestmark = pytest.mark.anyio

BIG = 20 * 1024 * 1024
BOUND = 8 * 1024 * 1024
PING = '{"seq_id": 1, "action": "__ping", "data": {}}'


def big_frame(seq_id: int = 7) -> str:
    return json.dumps({"seq_id": seq_id, "action": "__ping", "data": {"pad": "x" * BIG}})


def peak_rss(pid: int) -> int:
    """The process's peak resident set, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM for process {pid}")


async def test_a_20_mib_websocket_frame_is_refused_from_its_header(tmp_path: Path) -> None:
    async with lbp_rt(tmp_path) as runtime:
        pid = runtime.process.pid
        async with connect_ws(runtime.control_url) as raw:
            assert (await raw_exchange(raw, PING))["data"] == {"message": "pong"}
            before = peak_rss(pid)
            with contextlib.suppress(anyio.BrokenResourceError):
                await raw.send.send(big_frame())
            with anyio.fail_after(30):
                refused = await raw.receive.receive()
            assert isinstance(refused, MessageTooLargeError), refused
            assert "1009" in refused.message
        async with connect_ws(runtime.control_url) as again:  # the runtime is still up
            assert (await raw_exchange(again, PING))["data"] == {"message": "pong"}
        grown = peak_rss(pid) - before
    assert grown < BOUND, f"peak RSS grew by {grown / 2**20:.1f} MiB"


async def test_a_20_mib_stdio_frame_is_skipped_and_answered(tmp_path: Path) -> None:
    async with start_runtime(data_dir=tmp_path, stdio=True) as runtime:
        process = runtime.process
        assert process.stdin is not None
        assert process.stdout is not None
        # the host's framing: frames above 16 KiB are sent as chunk_start/data/end
        async with stdio_transport(process.stdout, process.stdin) as host:
            assert (await raw_exchange(host, PING))["data"] == {"message": "pong"}
            before = peak_rss(process.pid)
            reply = await raw_exchange(host, big_frame(seq_id=7))
            assert (reply["seq_id"], reply["data"]["error_code"]) == (7, "message_too_large")
            assert (await raw_exchange(host, PING))["data"] == {"message": "pong"}  # same link
            grown = peak_rss(process.pid) - before
    assert grown < BOUND, f"peak RSS grew by {grown / 2**20:.1f} MiB"
