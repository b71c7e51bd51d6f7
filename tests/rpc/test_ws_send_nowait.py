"""``WSFrameWriter.send_nowait``: a frame sent at once while the library would not wait,
refused (for the caller to ``send`` it) once the connection closes; ``__ping`` is
answered through it from the receive loop (issue 22)."""

from __future__ import annotations

import json

import anyio
import pytest

from langbot_plugin.rpc import RouteTable, RPCSession
from langbot_plugin.rpc.transport_ws import WSFrameWriter
from tests.conftest import raw_exchange, websockets_link

pytestmark = pytest.mark.anyio


async def test_a_frame_goes_at_once_on_an_open_connection_and_not_after_close() -> None:
    async with websockets_link() as (client, server):
        writer = server.send
        assert isinstance(writer, WSFrameWriter)
        assert writer.send_nowait('{"n": 1}')
        assert writer.send_nowait('{"n": 2}')
        with anyio.fail_after(10):
            assert [await client.receive.receive() for _ in range(2)] == ['{"n": 1}', '{"n": 2}']
        await writer.aclose()
        assert not writer.send_nowait('{"n": 3}')


async def test_pings_are_answered_one_by_one() -> None:
    async with websockets_link() as (client, server):
        session = RPCSession(server, RouteTable(), name="server")
        async with session.running():
            with anyio.fail_after(10):
                for seq in range(1, 20):
                    reply = await raw_exchange(
                        client, json.dumps({"seq_id": seq, "action": "__ping", "data": {}})
                    )
                    assert (reply["seq_id"], reply["data"]) == (seq, {"message": "pong"})
