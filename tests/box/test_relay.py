"""The managed-process relay on the fake backend: framing, attach rule, auth, bad frames."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.typing import Subprotocol

from box_runtime import managed_process
from box_runtime.backends.fake import FakeBackend
from box_runtime.backends.streams import ChunkReceiveStream
from box_runtime.client import BoxClient, relay_headers, relay_url
from box_runtime.framing import MAX_MESSAGE_BYTES
from box_runtime.managed_process import QUEUE_BYTES
from box_runtime.process_models import ManagedProcessStatus
from box_runtime.scope import placement_session_id
from box_runtime.sessions import Tenant
from tests.support.waiting import wait_until

from .helpers import CONTEXT, Served, fake_runtime, served_box

pytestmark = pytest.mark.anyio

TOKEN = "r" * 40
HEADERS = relay_headers(token=TOKEN, instance_id="inst-1", context=CONTEXT)
T1 = Tenant("inst-1", "ws-1", 1)


@asynccontextmanager
async def box_with(
    tmp_path: Path, *commands: tuple[str, str], **config: Any
) -> AsyncGenerator[tuple[Served, BoxClient]]:
    """A served Box (token, instance inst-1) with ``mcp-shared`` and processes started."""
    runtime, _ = fake_runtime(tmp_path, **config)
    async with (
        served_box(runtime, token=TOKEN) as box,
        BoxClient.connect(box.url, token=TOKEN, instance_id="inst-1", context=CONTEXT) as client,
    ):
        await client.create_session(session_id="mcp-shared", persistent=True)
        for process_id, command in commands:
            await client.start_managed_process(
                "mcp-shared", {"process_id": process_id, "command": command}
            )
        yield box, client


def url(box: Served, process_id: str = "p1", session_id: str = "mcp-shared") -> str:
    return relay_url(f"ws://127.0.0.1:{box.port}", session_id, process_id)


@asynccontextmanager
async def relay(
    box: Served, process_id: str = "p1", headers: dict[str, str] | None = None, **kw: Any
) -> AsyncGenerator[ClientConnection]:
    async with connect(
        url(box, process_id, kw.pop("session_id", "mcp-shared")),
        subprotocols=[Subprotocol("mcp")],
        additional_headers=HEADERS if headers is None else headers,
        max_size=4 * MAX_MESSAGE_BYTES,
        proxy=None,
        **kw,
    ) as ws:
        yield ws


def message(index: int, size: int) -> str:
    text = json.dumps({"jsonrpc": "2.0", "id": index, "method": "x", "params": {"t": ""}})
    filler = "é" * max(0, (size - len(text)) // 2)
    body = {"jsonrpc": "2.0", "id": index, "method": "x", "params": {"t": filler}}
    return json.dumps(body, ensure_ascii=False)


async def receive_text(ws: ClientConnection) -> str:
    with anyio.fail_after(30):
        frame = await ws.recv()
    assert isinstance(frame, str)
    return frame


async def test_one_message_per_frame_in_both_directions(tmp_path: Path) -> None:
    sizes = [1, 2, 100, 4095, 4096, 65536, 1 << 20, 4 << 20]
    async with box_with(tmp_path, ("p1", "echo")) as (box, _), relay(box) as ws:
        assert ws.subprotocol == "mcp"
        sent = [message(index, size) for index, size in enumerate(sizes)]
        for text in sent:  # a burst: every frame goes before any reply is read
            await ws.send(text)
        for text in sent:
            assert await receive_text(ws) == text
        await ws.send("{}")
        assert await receive_text(ws) == "{}"


async def test_a_frame_with_line_breaks_reaches_the_process_as_one_line(tmp_path: Path) -> None:
    async with box_with(tmp_path, ("p1", "echo")) as (box, _), relay(box) as ws:
        pretty = json.dumps({"jsonrpc": "2.0", "id": 1, "params": {"a": "b\nc"}}, indent=2)
        await ws.send(pretty)
        reply = await receive_text(ws)
        assert "\n" not in reply
        assert json.loads(reply) == json.loads(pretty)


async def test_bad_frames_get_json_rpc_errors_and_the_connection_stays(tmp_path: Path) -> None:
    async with box_with(tmp_path, ("p1", "echo")) as (box, _), relay(box) as ws:
        await ws.send("{not json")
        assert json.loads(await receive_text(ws))["error"]["code"] == -32700
        await ws.send("42")
        assert json.loads(await receive_text(ws))["error"]["code"] == -32600
        await ws.send(b'{"binary": true}')
        assert "text frames" in json.loads(await receive_text(ws))["error"]["message"]
        big = message(77, MAX_MESSAGE_BYTES + 10)
        await ws.send(big)
        refused = json.loads(await receive_text(ws))
        assert refused["id"] == 77
        assert refused["error"]["code"] == -32600
        assert f"at most {MAX_MESSAGE_BYTES} bytes" in refused["error"]["message"]
        await ws.send('{"still": "here"}')
        assert await receive_text(ws) == '{"still": "here"}'


async def send_and_receive(ws: ClientConnection, text: str) -> str:
    await ws.send(text)  # refused from its header on: the send itself may already fail
    return await receive_text(ws)


async def test_a_frame_beyond_twice_the_limit_closes_the_connection_only(tmp_path: Path) -> None:
    async with box_with(tmp_path, ("p1", "echo")) as (box, client):
        async with relay(box) as ws:
            with pytest.raises(ConnectionClosed) as closed:
                await send_and_receive(ws, message(1, 2 * MAX_MESSAGE_BYTES + 100))
            assert closed.value.rcvd is not None
            assert closed.value.rcvd.code == 1009  # message too big
        info = await client.get_managed_process("mcp-shared", "p1")
        assert info.status is ManagedProcessStatus.RUNNING
        async with relay(box) as ws:
            await ws.send("{}")
            assert await receive_text(ws) == "{}"


async def test_a_newer_attach_replaces_the_older(tmp_path: Path) -> None:
    async with box_with(tmp_path, ("p1", "echo")) as (box, client), relay(box) as first:
        await first.send('{"n": 1}')
        assert await receive_text(first) == '{"n": 1}'
        async with relay(box) as second:
            with pytest.raises(ConnectionClosed) as closed:
                await receive_text(first)
            assert closed.value.rcvd is not None
            assert closed.value.rcvd.code == 4001
            assert "newer attach" in closed.value.rcvd.reason
            await second.send('{"n": 2}')
            assert await receive_text(second) == '{"n": 2}'
            info = await client.get_managed_process("mcp-shared", "p1")
            assert info.attached
            assert info.attach_count == 2


async def test_the_process_outlives_a_dropped_relay(tmp_path: Path) -> None:
    async with box_with(tmp_path, ("p1", "echo")) as (box, client):
        async with relay(box) as ws:
            await ws.send('{"written": "before the drop"}')
        # The client left before reading the reply; the process keeps running and the
        # reply waits for the next attach.
        info = await client.get_managed_process("mcp-shared", "p1")
        assert info.status is ManagedProcessStatus.RUNNING
        async with relay(box) as ws:
            assert await receive_text(ws) == '{"written": "before the drop"}'
            await ws.send('{"after": 1}')
            assert await receive_text(ws) == '{"after": 1}'


async def test_stopping_the_process_closes_the_relay_with_its_status(tmp_path: Path) -> None:
    async with box_with(tmp_path, ("p1", "echo")) as (box, client), relay(box) as ws:
        await client.stop_managed_process("mcp-shared", "p1")
        with pytest.raises(ConnectionClosed) as closed:
            await receive_text(ws)
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 1000
        assert "status 0" in closed.value.rcvd.reason


async def test_a_slow_client_slows_the_process_and_nothing_is_dropped(tmp_path: Path) -> None:
    # 100 MiB: more than every buffer on the way, the kernel's socket buffers included.
    count, size = 1600, 64 * 1024
    async with box_with(tmp_path, ("p1", "echo")) as (box, _), relay(box) as ws:
        process = box.runtime.managed_process("mcp-shared", "p1", T1)
        fake_process = fake_of(box).processes[0]
        template = message(0, size)
        sent = 0

        async def sender() -> None:
            nonlocal sent
            for index in range(count):
                await ws.send(template.replace('"id": 0', f'"id": {index}', 1))
                sent += 1

        async with anyio.create_task_group() as tg:
            tg.start_soon(sender)
            # Nobody reads: the process ends up blocked on its stdout ...
            stdout = fake_process.stdout
            assert isinstance(stdout, ChunkReceiveStream)
            await wait_until(lambda: stdout.backlog() >= stdout.capacity, 30, 0.01)
            # ... and every queue of the relay is within its bound.
            assert process.outbox.bytes <= QUEUE_BYTES + size
            assert process.inbox.bytes <= QUEUE_BYTES + size
            for index in range(count):
                assert json.loads(await receive_text(ws))["id"] == index
        assert sent == count


def fake_of(box: Served) -> FakeBackend:
    backend = box.runtime._selection.backend if box.runtime._selection else None  # pyright: ignore[reportPrivateUsage]
    assert isinstance(backend, FakeBackend)
    return backend


async def test_the_host_physical_session_id_and_the_legacy_path(tmp_path: Path) -> None:
    async with box_with(tmp_path, ("p1", "echo"), ("default", "echo")) as (box, _):
        physical = placement_session_id("inst-1", "ws-1", 1, "mcp-shared")
        async with relay(box, session_id=physical) as ws:
            await ws.send('{"via": "placement id"}')
            assert await receive_text(ws) == '{"via": "placement id"}'
        legacy = f"ws://127.0.0.1:{box.port}/v1/sessions/mcp-shared/managed-process/ws"
        async with connect(legacy, additional_headers=HEADERS, proxy=None) as ws:
            await ws.send('{"via": "legacy"}')
            assert await receive_text(ws) == '{"via": "legacy"}'


async def status_of(box: Served, path: str, headers: dict[str, str]) -> tuple[int, str]:
    async with (
        aiohttp.ClientSession() as http,
        http.get(f"http://127.0.0.1:{box.port}{path}", headers=headers) as response,
    ):
        body = await response.json()
        return response.status, body["error"]["code"]


async def test_relay_requests_are_authenticated_like_rpc(tmp_path: Path) -> None:
    path = "/v1/sessions/mcp-shared/managed-process/p1/ws"
    async with box_with(tmp_path, ("p1", "echo")) as (box, _):
        no_token = {k: v for k, v in HEADERS.items() if "Token" not in k}
        assert await status_of(box, path, no_token) == (401, "unauthenticated")
        other = {**HEADERS, "X-LangBot-Instance-Id": "inst-2"}
        assert await status_of(box, path, other) == (401, "unauthenticated")
        no_instance = {k: v for k, v in HEADERS.items() if "Instance" not in k}
        assert await status_of(box, path, no_instance) == (401, "unauthenticated")
        # The tenant comes from the headers: without them the session is not found.
        bare = relay_headers(token=TOKEN, instance_id="inst-1")
        assert await status_of(box, path, bare) == (404, "box_session_not_found")
        other_ws = {**HEADERS, "X-LangBot-Workspace-Id": "ws-2"}
        assert await status_of(box, path, other_ws) == (404, "box_session_not_found")
        bad_generation = {**HEADERS, "X-LangBot-Placement-Generation": "x"}
        assert await status_of(box, path, bad_generation) == (400, "box_validation")
        missing = "/v1/sessions/mcp-shared/managed-process/nope/ws"
        assert await status_of(box, missing, HEADERS) == (404, "box_managed_process_not_found")


async def test_a_stale_placement_generation_is_refused(tmp_path: Path) -> None:
    async with box_with(tmp_path, ("p1", "echo")) as (box, client):
        await client.with_context({**CONTEXT, "placement_generation": 2}).status()
        path = "/v1/sessions/mcp-shared/managed-process/p1/ws"
        assert await status_of(box, path, HEADERS) == (403, "permission_denied")


async def test_an_exited_process_cannot_be_attached(tmp_path: Path) -> None:
    async with box_with(tmp_path, ("p1", "echo")) as (box, client):
        await client.stop_managed_process("mcp-shared", "p1")
        path = "/v1/sessions/mcp-shared/managed-process/p1/ws"
        assert await status_of(box, path, HEADERS) == (409, "box_managed_process_conflict")
        with pytest.raises(InvalidStatus):
            async with relay(box):
                pass


async def test_an_ambiguous_physical_id_is_refused(tmp_path: Path) -> None:
    async with box_with(tmp_path) as (box, client):
        for session_id in ("a/b", "a:b"):
            await client.create_session(session_id=session_id)
            await client.start_managed_process(session_id, {"process_id": "p1", "command": "echo"})
        physical = placement_session_id("inst-1", "ws-1", 1, "a/b")
        path = f"/v1/sessions/{physical}/managed-process/p1/ws"
        assert await status_of(box, path, HEADERS) == (409, "box_session_conflict")


async def test_status_counts_the_running_processes(tmp_path: Path) -> None:
    async with box_with(tmp_path, ("a", "echo"), ("b", "echo")) as (_, client):
        assert (await client.status()).managed_processes == 2
        await client.stop_managed_process("mcp-shared", "a")
        assert (await client.status()).managed_processes == 1
        session = await client.get_session("mcp-shared")
        assert session.managed_process_count == 1
        assert (
            await client.with_context({**CONTEXT, "workspace_uuid": "x"}).status()
        ).managed_processes == 0


async def test_a_relay_request_never_binds_the_instance(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path)
    async with served_box(runtime, token=TOKEN) as box:
        early = relay_headers(token=TOKEN, instance_id="inst-9", context=CONTEXT)
        path = "/v1/sessions/mcp-shared/managed-process/p1/ws"
        assert await status_of(box, path, early) == (404, "box_session_not_found")
        # The first control connection still binds its own instance.
        async with BoxClient.connect(box.url, token=TOKEN, instance_id="inst-1") as client:
            assert (await client.health()).available


async def test_an_oversized_reply_becomes_an_error_for_its_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(managed_process, "MAX_MESSAGE_BYTES", 1000)
    async with box_with(tmp_path) as (box, client):
        await client.start_managed_process(
            "mcp-shared", {"process_id": "p1", "command": "reply", "args": ["42", "5000"]}
        )
        async with relay(box) as ws:
            refused = json.loads(await receive_text(ws))
            assert refused["id"] == 42
            assert refused["error"]["code"] == -32603
            assert "at most 1000 bytes" in refused["error"]["message"]
            await ws.send('{"next": 1}')  # the stream goes on after the skipped line
            assert await receive_text(ws) == '{"next": 1}'
        info = await client.get_managed_process("mcp-shared", "p1")
        assert info.oversized_messages == 1
        assert "[lbp box] dropped a stdout message" in info.stderr_preview


async def test_the_05_dialect_names_no_process_id(tmp_path: Path) -> None:
    """A 0.5 host has one process a session: no ``process_id`` anywhere means ``default``."""
    async with box_with(tmp_path) as (box, client):
        session = client.session
        started = await session.call(
            "box_start_managed_process",
            {"session_id": "mcp-shared", "spec": {"command": "echo"}},
            context=CONTEXT,
        )
        assert started["process_id"] == "default"
        assert started["status"] == "running"
        got = await session.call(
            "box_get_managed_process", {"session_id": "mcp-shared"}, context=CONTEXT
        )
        assert got["process_id"] == "default"
        legacy = f"ws://127.0.0.1:{box.port}/v1/sessions/mcp-shared/managed-process/ws"
        async with connect(legacy, additional_headers=HEADERS, proxy=None) as ws:
            await ws.send('{"via": "0.5"}')
            assert await receive_text(ws) == '{"via": "0.5"}'
        stopped = await session.call(
            "box_stop_managed_process", {"session_id": "mcp-shared"}, context=CONTEXT
        )
        assert stopped == {"stopped": "default"}
