"""A sandboxed command never gets the Box's own stdin (in stdio mode, the host's RPC pipe)."""

from __future__ import annotations

import json

import anyio
import pytest

from box_runtime.child import start_box

from .mcp_box import require, scratch_dir

pytestmark = pytest.mark.anyio


async def test_an_nsjail_exec_reads_dev_null_not_the_rpc_pipe() -> None:
    require("nsjail")
    with scratch_dir() as state:
        config = {"backend": "nsjail", "state_dir": str(state / "state")}
        async with start_box(stdio=True, config=config) as child:
            box = child.process
            assert box.stdin is not None
            assert box.stdout is not None
            request = {
                "seq_id": 1,
                "action": "box_exec",
                "data": {"session_id": "s", "cmd": "head -c 64; echo end $?", "timeout_sec": 20},
            }
            await box.stdin.send((json.dumps(request) + "\n").encode())
            buffered = b""
            with anyio.fail_after(60):
                while b"\n" not in buffered:
                    buffered += await box.stdout.receive()
            reply = json.loads(buffered.split(b"\n", 1)[0])
            box.terminate()
    assert reply["code"] == 0, reply
    # /dev/null: an immediate end of input. With the Box's stdin the command would read
    # (or fail on) the host's RPC stream.
    assert reply["data"]["stdout"] == "end 0\n"
    assert reply["data"]["stderr"] == ""
