"""A Handler built where the host builds its subclass: in plain synchronous code, no event loop
running. Its session comes to life in the loop that first uses it; ``resp_waiters`` shows each
outbound call waiting for its answer, and answering one there completes the call (LangBot's own
tests answer ``set_runtime_config`` that way, without ever running the handler)."""

from __future__ import annotations

import asyncio
import json

import anyio
import pytest

from langbot_plugin.entities.io.errors import ActionCallError
from langbot_plugin.rpc.transport_memory import memory_pair
from langbot_plugin.runtime.io.connection import Connection, TransportConnection
from langbot_plugin.runtime.io.handler import ActionResponse, Handler, ResponseWaiter
from tests.support.waiting import PATIENCE


class RecordingConnection(Connection):
    """Keeps what is sent; never receives (the handler is never run)."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.frame_sent = anyio.Event()

    async def send(self, message: str) -> None:
        self.sent.append(message)
        self.frame_sent.set()

    async def receive(self) -> str:
        raise NotImplementedError

    async def close(self) -> None:
        return None


def test_a_handler_is_built_without_an_event_loop_and_serves_in_the_loop_that_runs_it() -> None:
    ours, theirs = memory_pair()
    host = Handler(TransportConnection(ours))  # no loop is running here
    peer = Handler(TransportConnection(theirs))
    assert not host.closed
    assert dict(host.resp_waiters) == {}

    @host.action("echo")
    async def echo(data: dict[str, object]) -> ActionResponse:
        return ActionResponse.success({"echo": data["text"]})

    async def main() -> dict[str, object]:
        answer: dict[str, object] = {}
        async with anyio.create_task_group() as tg:
            tg.start_soon(host.run)
            tg.start_soon(peer.run)
            answer.update(await peer.call_action("echo", {"text": "hi"}, timeout=PATIENCE))
            await host.close()
            await peer.close()
        return answer

    assert asyncio.run(main()) == {"echo": "hi"}
    assert host.closed


@pytest.mark.anyio
async def test_an_outbound_call_is_answered_through_resp_waiters() -> None:
    connection = RecordingConnection()
    handler = Handler(connection)
    result: dict[str, object] = {}

    async def call() -> None:
        result.update(await handler.call_action("set_runtime_config", {"x": 1}, timeout=PATIENCE))

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        with anyio.fail_after(PATIENCE):
            await connection.frame_sent.wait()
        seq_id = json.loads(connection.sent[0])["seq_id"]
        assert list(handler.resp_waiters) == [seq_id]
        waiter = handler.resp_waiters[seq_id]
        assert not waiter.done()
        waiter.set_result(ActionResponse.success({"applied": True}))
    seq_id = json.loads(connection.sent[0])["seq_id"]
    waiter = ResponseWaiter(handler.session, seq_id)
    assert result == {"applied": True}
    assert waiter.done()
    assert seq_id not in handler.resp_waiters
    with pytest.raises(asyncio.InvalidStateError):
        waiter.set_result(ActionResponse.success({}))


@pytest.mark.anyio
async def test_an_error_answered_through_resp_waiters_fails_the_call() -> None:
    connection = RecordingConnection()
    handler = Handler(connection)
    failures: list[ActionCallError] = []

    async def call() -> None:
        try:
            await handler.call_action("set_runtime_config", {}, timeout=PATIENCE)
        except ActionCallError as exc:
            failures.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        with anyio.fail_after(PATIENCE):
            await connection.frame_sent.wait()
        seq_id = json.loads(connection.sent[0])["seq_id"]
        handler.resp_waiters[seq_id].set_result(ActionResponse.error("refused by the test"))
    seq_id = json.loads(connection.sent[0])["seq_id"]
    assert len(failures) == 1
    assert "refused by the test" in str(failures[0])
    with pytest.raises(KeyError):
        handler.resp_waiters[seq_id + 1000]
