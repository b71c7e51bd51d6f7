"""RPC session behaviour, run over every transport (memory, pipes, websockets, aiohttp)."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from langbot_plugin.rpc import (
    ActionNotFoundError,
    ConnectionClosedError,
    InternalError,
    MalformedMessageError,
    MessageTooLargeError,
    NotFoundError,
    RequestContext,
    Route,
    RouteTable,
    RPCError,
    RPCSession,
    RPCTimeoutError,
    TooManyRequestsError,
    Transport,
)
from tests.conftest import raw_exchange
from tests.support.waiting import PATIENCE

pytestmark = pytest.mark.anyio


class QuotaExceededError(RPCError):
    code = "test_quota_exceeded"


class Probe:
    """Handlers that record what happened to them."""

    def __init__(self) -> None:
        self.produced = 0
        self.max_ahead = 0
        self.consumed = 0
        self.cancelled = anyio.Event()
        self.closed = anyio.Event()
        self.started = anyio.Event()
        self.release = anyio.Event()

    def routes(self) -> RouteTable:
        async def echo(ctx: RequestContext) -> dict[str, Any]:
            return ctx.data

        async def fail(ctx: RequestContext) -> dict[str, Any]:
            raise QuotaExceededError("over quota", details={"limit": 3, "actual": 5})

        async def crash(ctx: RequestContext) -> dict[str, Any]:
            raise ValueError("boom")

        async def upstream_gone(ctx: RequestContext) -> dict[str, Any]:
            raise ConnectionClosedError("the link this handler relied on closed")

        async def hang(ctx: RequestContext) -> dict[str, Any]:
            self.started.set()
            try:
                await anyio.sleep_forever()
            finally:
                self.cancelled.set()
            return {}

        async def block(ctx: RequestContext) -> dict[str, Any]:
            self.started.set()
            await self.release.wait()
            return {}

        async def count(ctx: RequestContext) -> AsyncIterator[dict[str, Any]]:
            try:
                for i in range(ctx.data["n"]):
                    self.produced += 1
                    self.max_ahead = max(self.max_ahead, self.produced - self.consumed)
                    yield {"i": i}
            finally:
                self.closed.set()

        async def endless(ctx: RequestContext) -> AsyncIterator[dict[str, Any]]:
            i = 0
            try:
                while True:
                    i += 1
                    yield {"i": i}
            finally:
                self.closed.set()

        return RouteTable(
            echo=Route(echo),
            fail=Route(fail),
            crash=Route(crash),
            upstream_gone=Route(upstream_gone),
            hang=Route(hang),
            block=Route(block),
            count=Route(count, stream=True),
            endless=Route(endless, stream=True),
        )


@asynccontextmanager
async def sessions(
    link: tuple[Transport, Transport], probe: Probe, **server_options: Any
) -> AsyncGenerator[tuple[RPCSession, RPCSession]]:
    client_t, server_t = link
    async with (
        RPCSession(client_t, name="client").running() as client,
        RPCSession(server_t, probe.routes(), name="server", **server_options).running() as server,
    ):
        yield client, server


async def test_unary_round_trip(link: tuple[Transport, Transport]) -> None:
    async with sessions(link, Probe()) as (client, _):
        assert await client.call("echo", {"a": [1, "ü", None]}) == {"a": [1, "ü", None]}
        assert await client.call("__ping") == {"message": "pong"}


async def test_big_message_crosses_intact(link: tuple[Transport, Transport]) -> None:
    text = "é" * 700_000 + "x" * 3  # multi-byte text, framed on stdio
    async with sessions(link, Probe()) as (client, _):
        assert (await client.call("echo", {"t": text}))["t"] == text


async def test_stream_respects_window_and_drops_nothing(link: tuple[Transport, Transport]) -> None:
    probe = Probe()
    async with sessions(link, probe) as (client, _):
        seen: list[int] = []
        async with client.stream("count", {"n": 100}) as items:
            async for item in items:
                seen.append(item["i"])
                probe.consumed += 1
                await anyio.lowlevel.checkpoint()
        assert seen == list(range(100))
        # The producer may run one window (8) plus the in-transit ack period ahead, never more.
        assert probe.max_ahead <= client.stream_window + client.ack_every + 1


async def test_slow_consumer_is_not_failed(link: tuple[Transport, Transport]) -> None:
    probe = Probe()
    async with sessions(link, probe) as (client, _):
        got = 0
        async with client.stream("count", {"n": 40}) as items:
            async for _ in items:
                got += 1
                probe.consumed += 1
                await anyio.sleep(0.005)
        assert got == 40


async def test_timeout_cancels_the_peer_handler(link: tuple[Transport, Transport]) -> None:
    probe = Probe()
    async with sessions(link, probe) as (client, server):
        with pytest.raises(RPCTimeoutError) as info:
            await client.call("hang", timeout=0.2)
        assert info.value.code == "timeout"
        with anyio.fail_after(PATIENCE):
            await probe.cancelled.wait()
        assert await client.call("echo", {"still": "up"}) == {"still": "up"}
        assert not server.closed


async def test_caller_cancellation_cancels_the_peer_handler(
    link: tuple[Transport, Transport],
) -> None:
    probe = Probe()
    async with sessions(link, probe) as (client, _):
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call, "hang")
            await probe.started.wait()
            tg.cancel_scope.cancel()
        with anyio.fail_after(PATIENCE):
            await probe.cancelled.wait()


async def test_abandoned_stream_closes_the_producer(link: tuple[Transport, Transport]) -> None:
    probe = Probe()
    async with sessions(link, probe) as (client, _):
        async with client.stream("endless") as items:
            async for item in items:
                if item["i"] == 3:
                    break
        with anyio.fail_after(PATIENCE):
            await probe.closed.wait()
        assert await client.call("echo", {}) == {}


async def test_unknown_action_has_a_stable_code(link: tuple[Transport, Transport]) -> None:
    async with sessions(link, Probe()) as (client, _):
        with pytest.raises(ActionNotFoundError) as info:
            await client.call("no_such_action")
        assert info.value.details == {"action": "no_such_action"}
        assert await client.call("echo", {"x": 1}) == {"x": 1}


async def test_errors_keep_class_code_and_details(link: tuple[Transport, Transport]) -> None:
    async with sessions(link, Probe()) as (client, _):
        with pytest.raises(QuotaExceededError) as info:
            await client.call("fail")
        assert info.value.message == "over quota"
        assert info.value.details == {"limit": 3, "actual": 5}
        with pytest.raises(InternalError) as crash:
            await client.call("crash")
        assert crash.value.message == "ValueError: boom"


async def test_unary_action_called_as_stream_ends(link: tuple[Transport, Transport]) -> None:
    async with sessions(link, Probe()) as (client, _):
        with anyio.fail_after(PATIENCE):
            items = await client.stream("echo", {"x": 2}).collect()
        assert items == [{"x": 2}]


async def test_excess_requests_wait_in_order_and_only_overflow_is_refused(
    link: tuple[Transport, Transport],
) -> None:
    probe = Probe()
    async with sessions(link, probe, max_inflight=2, max_queued=1) as (client, server):
        answers: list[dict[str, Any]] = []

        async def queued_echo() -> None:
            answers.append(await client.call("echo", {"queued": True}))

        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call, "block")
            tg.start_soon(client.call, "block")
            with anyio.fail_after(PATIENCE):  # both blocks admitted: the next request waits
                while server._active < 2:
                    await anyio.lowlevel.checkpoint()
            tg.start_soon(queued_echo)
            with anyio.fail_after(PATIENCE):
                while len(server._waiting) < 1:
                    await anyio.lowlevel.checkpoint()
            with pytest.raises(TooManyRequestsError) as refused:
                await client.call("echo", {"overflow": True})
            assert refused.value.details == {"limit": 2, "queued": 1}
            assert answers == []  # still waiting for a free slot
            probe.release.set()
        assert answers == [{"queued": True}]
        assert await client.call("echo", {"after": True}) == {"after": True}


async def test_a_waiting_request_can_be_cancelled(link: tuple[Transport, Transport]) -> None:
    probe = Probe()
    async with sessions(link, probe, max_inflight=1) as (client, server):
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call, "block")
            await probe.started.wait()
            with pytest.raises(RPCTimeoutError):
                await client.call("echo", {"never": "runs"}, timeout=0.2)  # queued, gives up
            with anyio.fail_after(PATIENCE):
                while server._waiting and not server._waiting[0][2].scope.cancel_called:
                    await anyio.lowlevel.checkpoint()
            probe.release.set()
        assert await client.call("echo", {"after": True}) == {"after": True}
        assert server._running == {}


async def test_peer_dying_mid_stream_fails_the_caller(link: tuple[Transport, Transport]) -> None:
    probe = Probe()
    async with sessions(link, probe) as (client, server):
        with pytest.raises(ConnectionClosedError):  # noqa: PT012
            async with client.stream("endless") as items:
                async for item in items:
                    if item["i"] == 2:
                        server.close()
                        await server.transport.send.aclose()


async def test_file_transfer_reassembles(link: tuple[Transport, Transport]) -> None:
    payload = bytes(range(256)) * 4096 + b"tail"
    async with sessions(link, Probe()) as (client, server):
        key = await client.send_file(payload, suffix="zip")
        assert key.endswith(".zip")
        assert server.files.take(key) == payload
        with pytest.raises(NotFoundError):
            server.files.take(key)


async def test_hostile_file_chunks_are_refused(link: tuple[Transport, Transport]) -> None:
    async with sessions(link, Probe()) as (client, _):
        base = {"file_key": "k1", "file_length": 4, "chunk_index": 0, "chunk_amount": 1}
        for bad in (
            {**base, "chunk_base64": "!!!"},
            {**base, "chunk_base64": "QUJDREVG"},  # 6 bytes > declared 4
            {**base, "chunk_index": 3, "chunk_base64": "QUJD"},
            {**base, "file_key": "../etc/passwd", "chunk_base64": "QUJD"},
        ):
            with pytest.raises(RPCError) as info:
                await client.call("__file_chunk", bad)
            assert info.value.code == "invalid_params"
        with pytest.raises(MessageTooLargeError):
            await client.call(
                "__file_chunk", {**base, "file_length": 1 << 40, "chunk_base64": "QUJD"}
            )


@pytest.mark.parametrize(
    ("frame", "seq_id", "code"),
    [
        ("{not json", -1, "malformed_message"),
        ('{"seq_id": 7, "action": "echo", "data": [1]}', 7, "malformed_message"),
        ('{"seq_id": 8, "action": 5, "data": {}}', 8, "malformed_message"),
        ('{"seq_id": 9, "data": {}}', 9, "malformed_message"),
        ('{"seq_id": 10, "action": "nope", "data": {}}', 10, "action_not_found"),
    ],
)
async def test_bad_frames_get_clear_errors_and_the_connection_survives(
    link: tuple[Transport, Transport], frame: str, seq_id: int, code: str
) -> None:
    raw, server_t = link
    async with RPCSession(server_t, Probe().routes(), name="server").running():
        reply = await raw_exchange(raw, frame)
        assert reply["seq_id"] == seq_id
        assert reply["code"] == 1
        assert reply["data"]["error_code"] == code
        assert reply["message"].startswith(reply["data"]["error_type"] + ": ")
        ok = await raw_exchange(raw, '{"seq_id": 11, "action": "echo", "data": {"fine": 1}}')
        assert ok == {
            "seq_id": 11,
            "code": 0,
            "message": "success",
            "data": {"fine": 1},
            "chunk_status": "continue",
        }


async def test_oversized_frame_is_refused_and_the_connection_survives(
    link: tuple[Transport, Transport],
) -> None:
    raw, server_t = link
    async with RPCSession(
        server_t, Probe().routes(), name="server", max_message_bytes=100_000
    ).running():
        big = json.dumps({"seq_id": 21, "action": "echo", "data": {"x": "y" * 200_000}})
        reply = await raw_exchange(raw, big)
        assert (reply["seq_id"], reply["data"]["error_code"]) == (21, "message_too_large")
        assert reply["data"]["details"]["limit"] == 100_000
        ok = await raw_exchange(raw, '{"seq_id": 22, "action": "__ping", "data": {}}')
        assert ok["data"] == {"message": "pong"}


async def test_ack_with_a_foreign_context_is_not_accepted(
    link: tuple[Transport, Transport],
) -> None:
    raw, server_t = link
    probe = Probe()
    async with RPCSession(server_t, probe.routes(), name="server").running():
        await raw.send.send(
            json.dumps(
                {
                    "seq_id": 30,
                    "action": "endless",
                    "data": {},
                    "context": {"w": "a"},
                    "stream_flow_control": 1,
                }
            )
        )
        indexes = []
        with anyio.fail_after(PATIENCE):
            while len(indexes) < 8:
                item = await raw.receive.receive()
                assert isinstance(item, str)
                indexes.append(json.loads(item)["stream_index"])
        assert indexes == list(range(1, 9))  # the window is full: the producer waits
        foreign = await raw_exchange(
            raw,
            json.dumps(
                {
                    "seq_id": 31,
                    "action": "__stream_ack",
                    "data": {"seq_id": 30, "index": 8},
                    "context": {"w": "b"},
                }
            ),
        )
        assert foreign["data"] == {"accepted": False}
        cancel = await raw_exchange(
            raw,
            json.dumps(
                {
                    "seq_id": 32,
                    "action": "__cancel_action",
                    "data": {"seq_id": 30},
                    "context": {"w": "a"},
                }
            ),
        )
        assert cancel["data"] == {"cancelled": True}
        with anyio.fail_after(PATIENCE):
            await probe.closed.wait()


async def test_malformed_error_types_map_back(link: tuple[Transport, Transport]) -> None:
    async with sessions(link, Probe()) as (client, _):
        with pytest.raises(MalformedMessageError):
            await client.call("__stream_ack", {"seq_id": "x"})


async def test_a_handler_losing_another_link_still_answers(
    link: tuple[Transport, Transport],
) -> None:
    """ConnectionClosedError from a different connection is an error to report, not our close."""
    async with sessions(link, Probe()) as (client, _):
        with anyio.fail_after(PATIENCE), pytest.raises(ConnectionClosedError, match="relied on"):
            await client.call("upstream_gone")


async def test_a_stream_requested_without_flow_control_still_streams_and_ends(
    link: tuple[Transport, Transport],
) -> None:
    """0.5 peers ask for streams without ``stream_flow_control``: no indexes, no window."""
    raw, server_t = link
    async with RPCSession(server_t, Probe().routes(), name="server").running():
        await raw.send.send(json.dumps({"seq_id": 40, "action": "count", "data": {"n": 20}}))
        frames: list[dict[str, Any]] = []
        with anyio.fail_after(PATIENCE):
            while not frames or frames[-1]["chunk_status"] != "end":
                item = await raw.receive.receive()
                assert isinstance(item, str)
                frames.append(json.loads(item))
        assert [f["data"].get("i") for f in frames[:-1]] == list(range(20))  # past any window
        assert all("stream_index" not in f for f in frames)
        assert frames[-1]["data"] == {}


async def test_a_failed_reply_nobody_awaits_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    """A session fails every pending reply when it closes, including one whose caller
    already left because its own send failed; that must not leave an unretrieved
    exception on a future (asyncio would log it when the future is collected)."""
    import gc

    from langbot_plugin.rpc.stream_call import Reply

    reply = Reply()
    reply.fail(ConnectionClosedError("closed while sending"))
    del reply
    gc.collect()
    await anyio.lowlevel.checkpoint()
    assert "never retrieved" not in caplog.text
    waited = Reply()
    waited.fail(ConnectionClosedError("closed"))
    with pytest.raises(ConnectionClosedError):
        await waited.get()
