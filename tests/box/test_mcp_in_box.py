"""MCP in the Box for real: the ``mcp`` client through our relay to a stdio MCP server.

Runs on a real Docker engine, a real nsjail and E2B (the real e2b SDK against the local
stand-in; skipped without them unless ``LBP_REQUIRE_DOCKER=1`` / ``LBP_REQUIRE_NSJAIL=1``
/ ``LBP_REQUIRE_E2B_STANDIN=1``). The server is built with the
``mcp`` package's server API and runs inside the sandbox; every message from 1 byte
to 4 MiB must arrive whole, one message per frame, in bursts and concurrently.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import signal

import anyio
import pytest
from mcp import ClientSession
from mcp_types import CallToolResult, TextContent
from websockets.asyncio.client import connect
from websockets.typing import Subprotocol

from box_runtime.child import start_box
from box_runtime.process_models import ManagedProcessInfo, ManagedProcessStatus
from tests.support.mcp_ws import MAX_FRAME_BYTES, FrameLog
from tests.support.waiting import wait_until

from .mcp_box import (
    BACKENDS,
    RELAY_BACKENDS,
    McpBox,
    box_config,
    mcp_box,
    remove_containers,
    require,
    scratch_dir,
)
from .mcp_fixture.burst_writer import expected

pytestmark = [pytest.mark.anyio, pytest.mark.docker]

SIZES = [1, 2, 10, 100, 1000, 4095, 4096, 4097, 65535, 65536, 65537, 1 << 20, 4 << 20]


@pytest.fixture(params=RELAY_BACKENDS)
async def box(request: pytest.FixtureRequest) -> McpBox:  # type: ignore[misc]
    async with mcp_box(request.param) as ready:
        yield ready  # type: ignore[misc]


def text_of(result: CallToolResult) -> str:
    assert not result.is_error, result
    (content,) = result.content
    assert isinstance(content, TextContent)
    return content.text


def pattern(size: int, seed: str) -> str:
    unit = hashlib.sha256(seed.encode()).hexdigest()
    return (unit * (size // len(unit) + 1))[:size]


async def call(session: ClientSession, tool: str, **arguments: object) -> str:
    with anyio.fail_after(120):
        return text_of(await session.call_tool(tool, dict(arguments)))


async def test_many_calls_and_every_size_arrive_intact(box: McpBox) -> None:
    await box.start()
    log = FrameLog()
    async with box.mcp(log=log) as session:
        tools = await session.list_tools()
        assert {tool.name for tool in tools.tools} == {"echo", "blob", "digest"}
        for index in range(200):
            assert await call(session, "echo", text=f"call {index} ✓") == f"call {index} ✓"
        for size in SIZES:
            text = pattern(size, f"up-{size}")
            assert await call(session, "echo", text=text) == text  # both directions
            assert await call(session, "blob", size=size, seed=f"down-{size}") == pattern(
                size, f"down-{size}"
            )
            digest = hashlib.sha256(text.encode()).hexdigest()
            assert await call(session, "digest", text=text) == digest
    assert log.errors == []  # every frame was exactly one JSON-RPC message
    assert log.largest > 8 << 20  # the 4 MiB echo came back as one frame (text twice)


async def test_bursts_of_concurrent_calls(box: McpBox) -> None:
    await box.start()
    log = FrameLog()
    async with box.mcp(log=log) as session:
        results: dict[int, str] = {}

        async def one(index: int) -> None:
            size = SIZES[index % len(SIZES)] if index % 5 == 0 else index + 1
            results[index] = await call(session, "blob", size=size, seed=str(index))
            assert results[index] == pattern(size, str(index))

        for _ in range(3):
            async with anyio.create_task_group() as tg:
                for index in range(60):
                    tg.start_soon(one, index)
    assert len(results) == 60
    assert log.errors == []


async def test_the_relay_frames_exactly_whatever_the_writes(box: McpBox) -> None:
    await box.start("burst", args=["/opt/fixture/burst_writer.py"])
    frames = [json.dumps({"i": i, "p": "y" * size}) for i, size in enumerate(SIZES)]
    async with connect(
        box.url("burst"),
        subprotocols=[Subprotocol("mcp")],
        additional_headers=box.headers,
        max_size=MAX_FRAME_BYTES,
        proxy=None,
    ) as ws:
        for frame in frames:  # all at once: each must reach stdin as exactly one line
            await ws.send(frame)
        for frame in frames:
            with anyio.fail_after(60):
                reply = json.loads(await ws.recv())
            data = frame.encode()
            assert reply["result"] == [len(data), hashlib.sha256(data).hexdigest()]
        await ws.send('{"go": true}')
        for want in expected():
            with anyio.fail_after(60):
                got = await ws.recv()
            assert isinstance(got, str)
            assert got.encode() == want


async def test_the_process_outlives_its_client_and_serves_the_next(box: McpBox) -> None:
    await box.start()
    async with box.mcp() as session:
        assert await call(session, "echo", text="first client") == "first client"
    info = await box.client.get_managed_process("mcp-shared", "echo")
    assert info.status is ManagedProcessStatus.RUNNING
    again = await box.start()  # the host's reconnect: a reuse, not a second copy
    assert again.started_at == info.started_at
    async with box.mcp() as session:
        assert await call(session, "echo", text="second client") == "second client"


async def test_stop_is_ordered_and_reports_the_exit(box: McpBox) -> None:
    await box.start()
    await box.start(
        "stubborn", command="sh", args=["-c", "trap '' TERM; while :; do sleep 1; done"]
    )
    async with box.mcp() as session:  # the server is up and reads its stdin
        assert await call(session, "echo", text="ready") == "ready"
    await box.client.stop_managed_process("mcp-shared", "echo")
    polite = await box.client.get_managed_process("mcp-shared", "echo")
    assert polite.status is ManagedProcessStatus.EXITED
    assert polite.exit_code == 0  # the MCP server ended at the end of its stdin
    await box.client.stop_managed_process("mcp-shared", "stubborn")
    stubborn = await box.client.get_managed_process("mcp-shared", "stubborn")
    assert stubborn.status is ManagedProcessStatus.EXITED
    assert stubborn.exit_code != 0


async def _exited(box: McpBox, name: str, seconds: float) -> ManagedProcessInfo:
    """The process's info once it no longer runs (it exits inside the sandbox)."""
    await wait_until(lambda: _status(box, name, ManagedProcessStatus.EXITED), seconds=seconds)
    return await box.client.get_managed_process("mcp-shared", name)


async def _status(box: McpBox, name: str, status: ManagedProcessStatus) -> bool:
    return (await box.client.get_managed_process("mcp-shared", name)).status is status


async def test_stderr_and_exit_code_of_a_failing_process(box: McpBox) -> None:
    await box.start(
        "failing", command="sh", args=["-c", "echo 'cannot start: no config' >&2; exit 3"]
    )
    info = await _exited(box, "failing", seconds=30)
    assert info.exit_code == 3
    assert "cannot start: no config" in info.stderr_preview


async def test_a_process_memory_limit_on_nsjail() -> None:
    hog = "x = bytearray(300 * 1024 * 1024); print('allocated', flush=True)"
    async with mcp_box("nsjail", memory_mb=1024) as box:
        await box.start("small", command="python3", args=["-c", hog], memory_mb=64)
        await box.start("large", command="python3", args=["-c", hog])
        for name in ("small", "large"):
            info = await _exited(box, name, seconds=60)
            if name == "small":
                assert info.exit_code != 0  # killed (or refused memory) at 64 MiB
            else:
                assert info.exit_code == 0


@pytest.mark.parametrize("backend", BACKENDS)
async def test_sigterm_stops_managed_processes(backend: str) -> None:
    """``lbp box`` on SIGTERM stops every managed process, persistent sessions' included."""
    require(backend)
    deployment = "s" + secrets.token_hex(5)
    marker = f"lbp-sigterm-{deployment}"
    with scratch_dir() as state:
        config = box_config(backend, state, deployment)
        try:
            async with start_box(config=config) as box:
                process = box.process
                async with box.client() as client:
                    await client.create_session(session_id="keep", persistent=True)
                    await client.start_managed_process(
                        "keep",
                        {"command": "sh", "args": ["-c", "while :; do sleep 1; done", marker]},
                    )
                    info = await client.get_managed_process("keep")
                    assert info.status is ManagedProcessStatus.RUNNING
                    await wait_until(lambda: _running(marker), seconds=30)
                process.send_signal(signal.SIGTERM)
                with anyio.fail_after(60):
                    assert await process.wait() == 0
            assert not _running(marker)
        finally:
            if backend == "docker":
                remove_containers(deployment)


def _running(marker: str) -> bool:
    """Whether a process whose command line holds ``marker`` runs (any namespace)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                if marker.encode() in cmdline.read():
                    return True
        except OSError:
            continue
    return False
