"""Explicit file export (seed 004) through the SDK, the host machinery and a real Box.

The runner side is the SDK's ``AgentRunAPIProxy`` over a real RPC link to
:class:`LocalHost`, whose run machinery exports through the Box's own client from a
Box served on 127.0.0.1, on Docker and on nsjail. Every refusal of the seed's
checklist is here; each says which side refused (the SDK before sending, the host
before asking the Box, the Box) and that every file stayed where it was.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from langbot_plugin.api.entities.builtin.agent_runner.context import AgentRunContext
from langbot_plugin.api.entities.builtin.agent_runner.errors import (
    AgentAPIException,
    PermissionDeniedError,
)
from langbot_plugin.api.proxies.agent_run import AgentRunAPIProxy
from langbot_plugin.host.run_context import make_resources
from langbot_plugin.host.run_host import StartedRun
from langbot_plugin.protocol.host_api import box, messaging
from langbot_plugin.rpc import RPCSession
from langbot_plugin.rpc.transport_memory import memory_pair
from tests.host.test_run_api import OWNER
from tests.support.as_plugin import AsPlugin
from tests.support.box_host import SESSION, BoxHost, box_host

pytestmark = pytest.mark.anyio

MIB = 1024 * 1024
OUT = "/workspace/outbox"


@pytest.fixture(params=["docker", "nsjail"])
async def host(request: pytest.FixtureRequest) -> AsyncGenerator[BoxHost]:
    async with box_host(request.param) as served:
        yield served


async def start(host: BoxHost, **options: Any) -> StartedRun:
    options.setdefault("available_apis", ["box"])
    options.setdefault("resources", make_resources(tools=["event_reply", "sandbox_exec"]))
    options.setdefault("box_session", SESSION)
    return await host.local.start_run(OWNER, "exporter", "export", **options)


@asynccontextmanager
async def api_for(host: BoxHost, run: StartedRun) -> AsyncGenerator[AgentRunAPIProxy]:
    host_end, plugin_end = memory_pair()
    async with (
        RPCSession(host_end, host.local, name="host").running(),
        RPCSession(plugin_end, None, name="plugin").running() as session,
    ):
        ctx = AgentRunContext.model_validate(run.context)
        yield AgentRunAPIProxy(ctx=ctx, plugin_runtime_handler=AsPlugin(session, OWNER))


async def refused(call: Any, code: str) -> AgentAPIException:
    with anyio.fail_after(60), pytest.raises(AgentAPIException) as caught:
        await call
    assert caught.value.code == code, caught.value
    return caught.value


async def listing(host: BoxHost) -> list[str]:
    return (await host.sh(f"ls {OUT}")).split()


async def raw_export(api: AgentRunAPIProxy, paths: list[str]) -> box.ExportedBoxFiles:
    """An export the SDK does not check first (what a runner of another SDK may send)."""
    return await api._send(box.EXPORT_BOX_FILES, box.ExportBoxFilesParams(paths=paths))  # pyright: ignore[reportPrivateUsage]


# --------------------------------------------------------------------------- accepted


async def test_an_exported_file_is_removed_from_the_box_and_delivered_once(host: BoxHost) -> None:
    await host.sh(f"head -c 300000 /dev/urandom > {OUT}/r.bin && chmod 600 {OUT}/r.bin")
    digest = (await host.sh(f"sha256sum {OUT}/r.bin")).split()[0]
    await host.sh(f"echo keep > {OUT}/unselected.txt")
    run = await start(host)
    async with api_for(host, run) as api:
        (exported,) = await api.export_box_files([f"{OUT}/r.bin"])
        assert (exported.name, exported.type, exported.size) == ("r.bin", "File", 300000)
        assert exported.path == f"{OUT}/r.bin"
        assert exported.warning is None
        assert exported.id.startswith("file-")
        assert len(exported.id) > 30
        assert await listing(host) == ["unselected.txt"]  # compare-and-delete, selected only

        assert await api.reply_files([exported.id]) == {"sent": True, "file_ids": [exported.id]}
        (delivery,) = run.session.deliveries
        (sent,) = delivery.files
        assert hashlib.sha256(sent.data).hexdigest() == digest  # root-owned 0600, exact bytes
        assert (delivery.via, sent.name) == ("reply", "r.bin")

        again = await refused(api.reply_files([exported.id]), "box.files.not_deliverable")
        assert again.details["reason"] == "delivered"
        assert len(run.session.deliveries) == 1
        assert await api.export_box_files([f"{OUT}/unselected.txt"]) != []


async def test_unchanged_files_keep_their_handle_and_changed_ones_get_new_ones(
    host: BoxHost,
) -> None:
    run = await start(host)
    async with api_for(host, run) as api:
        await host.sh(f"echo one > {OUT}/a.txt")
        (first,) = await api.export_box_files([f"{OUT}/a.txt"])
        await host.sh(f"echo one > {OUT}/a.txt")  # the same bytes again
        (same,) = await api.export_box_files([f"{OUT}/a.txt"])
        assert same.id == first.id  # unchanged: the same handle, counted once
        await host.sh(f"echo two > {OUT}/a.txt && echo one > {OUT}/b.txt")
        items = await api.export_box_files([f"{OUT}/a.txt", f"{OUT}/b.txt"])
        ids = [f.id for f in items]
        assert ids[0] == first.id
        assert len(set(ids)) == 3
        assert [f.path for f in items] == [f"{OUT}/a.txt", f"{OUT}/a.txt", f"{OUT}/b.txt"]
        await api.reply_files([first.id])
        await host.sh(f"echo one > {OUT}/a.txt")  # delivered content, exported again
        pending = await api.export_box_files([f"{OUT}/a.txt"])
        assert first.id not in [f.id for f in pending]  # never offered for delivery again
        assert all("delivered unchanged" in (f.warning or "") for f in pending)


async def test_a_file_that_cannot_be_removed_is_a_warning_and_keeps_its_handle(
    host: BoxHost,
) -> None:
    """Cleanup failure never registers or delivers twice: the retained, unchanged file
    read again is the same handle, and a delivered one is not offered again."""
    await host.sh(f"mkdir -p {OUT}/ro && echo x > {OUT}/ro/f.txt && chmod 555 {OUT}/ro")
    run = await start(host)
    async with api_for(host, run) as api:
        (item,) = await api.export_box_files([f"{OUT}/ro/f.txt"])
        assert item.warning is not None
        assert "left in the Box" in item.warning
        assert "(not_permitted)" in item.warning
        assert "do not repeat delivery" in item.warning
        assert (await host.sh(f"cat {OUT}/ro/f.txt")) == "x\n"  # retained
        (again,) = await api.export_box_files([f"{OUT}/ro/f.txt"])
        assert again.id == item.id
        await api.reply_files([item.id])
        assert await api.export_box_files([f"{OUT}/ro/f.txt"]) == []
        assert len(run.session.deliveries) == 1


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("setup", "path", "reason"),
    [
        (f"ln -s /etc/hostname {OUT}/link", f"{OUT}/link", "symlink"),
        (f"mkdir -p {OUT}/real && ln -s real {OUT}/ldir && echo x > {OUT}/real/f",
         f"{OUT}/ldir/f", "symlink"),
        (f"mkfifo {OUT}/fifo", f"{OUT}/fifo", "not_regular"),
        (f"mkdir -p {OUT}/dir", f"{OUT}/dir", "not_regular"),
        ("true", f"{OUT}/missing.txt", "missing"),
    ],
    ids=["symlink", "symlinked-directory", "fifo", "directory", "missing"],
)  # fmt: skip
async def test_a_file_the_box_refuses_fails_the_whole_batch(
    host: BoxHost, setup: str, path: str, reason: str
) -> None:
    await host.sh(f"{setup} && echo good > {OUT}/good.txt")
    before = await listing(host)
    run = await start(host)
    async with api_for(host, run) as api:
        error = await refused(api.export_box_files([f"{OUT}/good.txt", path]), "box.export.refused")
        assert error.details["reason"] == reason
        assert error.details["files_retained"] is True
        assert path in error.details["sandbox_paths"]
        assert await listing(host) == before  # the good file of the batch was kept too
        assert host.local.runs.files.of(run.run_id).files == {}  # type: ignore[union-attr]


BAD_SELECTIONS = [
    ([], "non-empty list"),
    (["workspace/outbox/a.txt"], "normalized absolute"),
    ([f"{OUT}/../outbox/a.txt"], "normalized absolute"),
    ([f"{OUT}/./a.txt"], "normalized absolute"),
    ([f"{OUT}/a.txt", f"{OUT}/a.txt"], "selected twice"),
]
BAD_IDS = ["empty", "relative", "dotdot", "dot", "twice"]


@pytest.mark.parametrize(("paths", "why"), BAD_SELECTIONS, ids=BAD_IDS)
async def test_the_sdk_refuses_a_bad_selection_before_sending(
    host: BoxHost, paths: list[str], why: str
) -> None:
    run = await start(host)
    async with api_for(host, run) as api:
        error = await refused(api.export_box_files(paths), "invalid_argument")
        assert why in error.message
    assert host.local.calls_of("export_box_files") == []


@pytest.mark.parametrize(("paths", "why"), BAD_SELECTIONS, ids=BAD_IDS)
async def test_the_host_refuses_a_bad_selection_before_asking_the_box(
    host: BoxHost, paths: list[str], why: str
) -> None:
    run = await start(host)
    async with api_for(host, run) as api:
        error = await refused(raw_export(api, paths), "box.export.refused")
        assert why in error.message
        assert error.details["reason"] == "invalid_path"
    assert host.box.reads == 0


async def test_too_many_files_a_call_are_refused_by_the_sdk_and_the_host(host: BoxHost) -> None:
    paths = [f"{OUT}/f{i}.txt" for i in range(21)]
    await host.sh(f"cd {OUT} && for i in $(seq 0 20); do echo $i > f$i.txt; done")
    run = await start(host)
    async with api_for(host, run) as api:
        sdk = await refused(api.export_box_files(paths), "box.export.limit_exceeded")
        assert host.local.calls_of("export_box_files") == []
        hosted = await refused(raw_export(api, paths), "box.export.limit_exceeded")
    assert host.box.reads == 0
    for error in (sdk, hosted):
        details = error.details
        assert (details["limit_type"], details["limit"], details["actual"]) == (
            "call_files",
            20,
            21,
        )
        assert details["sandbox_paths"] == paths
        assert details["files_retained"] is True
        assert "20 files" in error.message
        assert "21 files" in error.message
        assert "all were kept" in error.message
    assert len(await listing(host)) == 21


async def test_a_file_over_10_mib_is_refused_with_its_size(host: BoxHost) -> None:
    await host.sh(f"head -c {10 * MIB + 1} /dev/zero > {OUT}/big.bin && echo s > {OUT}/s.txt")
    run = await start(host)
    async with api_for(host, run) as api:
        error = await refused(
            api.export_box_files([f"{OUT}/s.txt", f"{OUT}/big.bin"]), "box.export.limit_exceeded"
        )
    details = error.details
    assert (details["limit_type"], details["limit"], details["actual"]) == (
        "file_bytes", 10 * MIB, 10 * MIB + 1
    )  # fmt: skip
    assert details["sandbox_paths"] == [f"{OUT}/big.bin"]
    assert details["files_retained"]
    assert sorted(await listing(host)) == ["big.bin", "s.txt"]


async def test_a_call_over_50_mib_is_refused_with_its_total(host: BoxHost) -> None:
    await host.sh(f"cd {OUT} && for i in 1 2 3 4 5 6; do head -c {9 * MIB} /dev/zero > n$i; done")
    paths = [f"{OUT}/n{i}" for i in range(1, 7)]
    run = await start(host)
    async with api_for(host, run) as api:
        error = await refused(api.export_box_files(paths), "box.export.limit_exceeded")
    details = error.details
    assert (details["limit_type"], details["limit"]) == ("call_bytes", 50 * MIB)
    assert details["actual"] == 54 * MIB
    assert details["files_retained"] is True
    assert len(await listing(host)) == 6


async def test_a_run_over_100_files_is_refused_and_keeps_its_handles(host: BoxHost) -> None:
    await host.sh(f"cd {OUT} && for i in $(seq 1 101); do echo $i > f$i; done")
    run = await start(host)
    async with api_for(host, run) as api:
        for start_at in range(1, 101, 20):
            await api.export_box_files([f"{OUT}/f{i}" for i in range(start_at, start_at + 20)])
        error = await refused(api.export_box_files([f"{OUT}/f101"]), "box.export.limit_exceeded")
        details = error.details
        assert (details["limit_type"], details["limit"], details["actual"]) == (
            "run_files",
            100,
            101,
        )
        assert (details["remaining"], details["sandbox_paths"]) == (0, [f"{OUT}/f101"])
        assert await listing(host) == ["f101"]
        held = host.local.runs.files.of(run.run_id)
        assert held is not None
        assert len(held.files) == 100


async def test_a_run_over_50_mib_is_refused_and_keeps_the_file(host: BoxHost) -> None:
    await host.sh(
        f"cd {OUT} && for i in 1 2 3 4 5 6; do head -c {9 * MIB} /dev/urandom > n$i; done"
    )
    run = await start(host)
    async with api_for(host, run) as api:
        await api.export_box_files([f"{OUT}/n{i}" for i in range(1, 6)])
        error = await refused(api.export_box_files([f"{OUT}/n6"]), "box.export.limit_exceeded")
    details = error.details
    assert (details["limit_type"], details["limit"], details["actual"]) == (
        "run_bytes", 50 * MIB, 54 * MIB
    )  # fmt: skip
    assert details["remaining"] == 5 * MIB
    assert details["files_retained"] is True
    assert await listing(host) == ["n6"]


async def test_a_handle_of_another_run_is_refused(host: BoxHost) -> None:
    await host.sh(f"echo mine > {OUT}/a.txt")
    first, second = await start(host), await start(host)
    async with api_for(host, first) as api:
        (theirs,) = await api.export_box_files([f"{OUT}/a.txt"])
    async with api_for(host, second) as api:
        error = await refused(api.reply_files([theirs.id]), "box.files.not_deliverable")
        assert error.details["not_of_this_run"] == [theirs.id]
        guessed = await refused(api.reply_files(["file-guessed"]), "box.files.not_deliverable")
        assert guessed.details["reason"] == "not_of_this_run"
    assert second.session.deliveries == []


async def test_file_replies_need_the_event_reply_tool_and_export_needs_box(host: BoxHost) -> None:
    run = await start(host, resources=make_resources(tools=[]), available_apis=[])
    async with api_for(host, run) as api:
        with pytest.raises(PermissionDeniedError):
            await api.export_box_files([f"{OUT}/a.txt"])
        with pytest.raises(PermissionDeniedError):
            await api.reply_files(["file-x"])
        # the host refuses again what the SDK would not have sent
        params = box.ExportBoxFilesParams(paths=[f"{OUT}/a.txt"])
        with pytest.raises(PermissionDeniedError) as denied:
            await api._send(box.EXPORT_BOX_FILES, params)  # pyright: ignore[reportPrivateUsage]
        assert denied.value.code == "api_not_available"
        reply = messaging.PlatformApiParams(
            action="send_message", context_tool="event_reply", file_ids=["file-x"]
        )
        with pytest.raises(PermissionDeniedError) as tool:
            await api._send(messaging.CALL_PLATFORM_API, reply)  # pyright: ignore[reportPrivateUsage]
        assert tool.value.code == "resource_not_granted"
        assert tool.value.details["resource"] == "event_reply"
    assert host.box.reads == 0


async def test_a_run_without_a_bound_box_cannot_export(host: BoxHost) -> None:
    run = await start(host, box_session=None)
    async with api_for(host, run) as api:
        error = await refused(api.export_box_files([f"{OUT}/a.txt"]), "box.export.refused")
    assert error.details["reason"] == "no_box"
