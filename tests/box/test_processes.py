"""Managed processes on the fake backend: reuse, limits, stop order, lifetimes, status."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import anyio
import pytest

from box_runtime import managed_process as processes_module
from box_runtime.errors import (
    BoxCapacityExceededError,
    BoxManagedProcessConflictError,
    BoxManagedProcessNotFoundError,
    BoxSessionNotFoundError,
)
from box_runtime.managed_process import ManagedProcess
from box_runtime.models import BoxSpec
from box_runtime.process_models import ManagedProcessSpec, ManagedProcessStatus
from box_runtime.runtime import BoxRuntime
from box_runtime.sessions import Tenant
from tests.support.waiting import PATIENCE, wait_until

from .helpers import fake_runtime

pytestmark = pytest.mark.anyio

T1 = Tenant("inst-1", "ws-1", 1)


@pytest.fixture(autouse=True)
def short_stop_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the escalation quick; the order is what these tests check."""
    monkeypatch.setattr(processes_module, "STDIN_GRACE_SEC", 0.2)
    monkeypatch.setattr(processes_module, "TERM_GRACE_SEC", 0.2)


def proc(command: str, *args: str, process_id: str = "p1", **fields: Any) -> ManagedProcessSpec:
    return ManagedProcessSpec.model_validate(
        {"process_id": process_id, "command": command, "args": list(args), **fields}
    )


async def session(runtime: BoxRuntime, session_id: str = "mcp-shared") -> None:
    await runtime.create_session(BoxSpec(session_id=session_id, persistent=True), T1)


async def exchange(process: ManagedProcess, line: bytes) -> str:
    await process.inbox.put(line, len(line))
    with anyio.fail_after(PATIENCE):
        return await process.outbox.get()


async def test_start_get_and_echo(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with runtime.running():
        await session(runtime)
        process, reused = await runtime.start_managed_process(
            "mcp-shared", proc("echo", env={"A": "1"}, cwd="/workspace/srv"), T1
        )
        assert not reused
        info = runtime.managed_process("mcp-shared", "p1", T1).info()
        assert info.status is ManagedProcessStatus.RUNNING
        assert (info.session_id, info.process_id, info.cwd, info.env_keys) == (
            "mcp-shared",
            "p1",
            "/workspace/srv",
            ["A"],
        )
        assert await exchange(process, b'{"id":1}\n') == '{"id":1}'
        spawned = fake.processes[0]
        assert spawned.request.argv == ("echo",)
        assert spawned.request.cwd == "/workspace/srv"
        assert spawned.request.env == {"A": "1"}


async def test_starting_a_running_process_again_is_a_reuse(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with runtime.running():
        await session(runtime)
        first, _ = await runtime.start_managed_process("mcp-shared", proc("echo"), T1)
        again, reused = await runtime.start_managed_process("mcp-shared", proc("echo"), T1)
        assert reused
        assert again is first
        assert len(fake.processes) == 1
        with pytest.raises(BoxManagedProcessConflictError, match="stop it first"):
            await runtime.start_managed_process("mcp-shared", proc("echo", "other"), T1)


async def test_concurrent_starts_make_one_process(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with runtime.running():
        await session(runtime)
        started: list[ManagedProcess] = []

        async def start() -> None:
            process, _ = await runtime.start_managed_process("mcp-shared", proc("echo"), T1)
            started.append(process)

        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(start)
        assert len(fake.processes) == 1
        assert len({id(p) for p in started}) == 1


async def test_processes_are_isolated_by_process_id(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path)
    async with runtime.running():
        await session(runtime)
        a, _ = await runtime.start_managed_process("mcp-shared", proc("echo", process_id="a"), T1)
        b, _ = await runtime.start_managed_process("mcp-shared", proc("echo", process_id="b"), T1)
        assert await exchange(a, b"to-a\n") == "to-a"
        assert await exchange(b, b"to-b\n") == "to-b"
        await runtime.stop_managed_process("mcp-shared", "a", T1)
        assert not a.running
        assert b.running
        assert await exchange(b, b"still\n") == "still"


async def test_an_exited_process_reports_its_status_and_starts_afresh(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with runtime.running():
        await session(runtime)
        first, _ = await runtime.start_managed_process("mcp-shared", proc("exit", "3"), T1)
        with anyio.fail_after(PATIENCE):
            await first.finished.wait()
        info = first.info()
        assert info.status is ManagedProcessStatus.EXITED
        assert info.exit_code == 3
        assert info.exited_at is not None
        second, reused = await runtime.start_managed_process("mcp-shared", proc("echo"), T1)
        assert not reused
        assert second is not first
        assert len(fake.processes) == 2


async def test_stderr_preview_shows_what_the_process_wrote(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path)
    async with runtime.running():
        await session(runtime)
        process, _ = await runtime.start_managed_process(
            "mcp-shared", proc("stderr", "starting up"), T1
        )
        await wait_until(lambda: "starting up" in process.info().stderr_preview, interval=0.01)


async def test_stop_closes_stdin_first(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with runtime.running():
        await session(runtime)
        process, _ = await runtime.start_managed_process("mcp-shared", proc("echo"), T1)
        await runtime.stop_managed_process("mcp-shared", "p1", T1)
        assert fake.processes[0].signals == []  # it ended at the end of its stdin
        assert process.exit_code == 0


async def test_stop_escalates_to_terminate_then_kill(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with runtime.running():
        await session(runtime)
        term, _ = await runtime.start_managed_process(
            "mcp-shared", proc("term", process_id="t"), T1
        )
        stubborn, _ = await runtime.start_managed_process(
            "mcp-shared", proc("stubborn", process_id="s"), T1
        )
        await runtime.stop_managed_process("mcp-shared", "t", T1)
        await runtime.stop_managed_process("mcp-shared", "s", T1)
    assert fake.processes[0].signals == [signal.SIGTERM]
    assert term.exit_code == 128 + signal.SIGTERM
    assert fake.processes[1].signals == [signal.SIGTERM, signal.SIGKILL]
    assert stubborn.exit_code == 128 + signal.SIGKILL


async def test_stopping_an_unknown_process_is_an_error(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path)
    async with runtime.running():
        await session(runtime)
        with pytest.raises(BoxManagedProcessNotFoundError):
            await runtime.stop_managed_process("mcp-shared", "nope", T1)
        with pytest.raises(BoxSessionNotFoundError):
            await runtime.start_managed_process("no-session", proc("echo"), T1)


async def test_deleting_the_session_stops_its_processes(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with runtime.running():
        await session(runtime)
        process, _ = await runtime.start_managed_process("mcp-shared", proc("stubborn"), T1)
        await runtime.delete_session("mcp-shared", T1)
        assert not process.running
        assert fake.processes[0].signals == [signal.SIGTERM, signal.SIGKILL]
        with pytest.raises(BoxSessionNotFoundError):
            runtime.managed_process("mcp-shared", "p1", T1)


async def test_closing_the_runtime_stops_every_process(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with runtime.running():
        await session(runtime)  # persistent: the session itself survives the close
        process, _ = await runtime.start_managed_process("mcp-shared", proc("term"), T1)
    assert not process.running
    assert fake.processes[0].signals == [signal.SIGTERM]


async def test_the_process_capacity_is_enforced(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path, limits={"max_managed_processes": 2})
    async with runtime.running():
        await session(runtime)
        await runtime.start_managed_process("mcp-shared", proc("echo", process_id="a"), T1)
        await runtime.start_managed_process("mcp-shared", proc("echo", process_id="b"), T1)
        with pytest.raises(BoxCapacityExceededError) as refused:
            await runtime.start_managed_process("mcp-shared", proc("echo", process_id="c"), T1)
        assert refused.value.details == {
            "quota": "max_managed_processes",
            "limit": 2,
            "actual": 2,
        }
        await runtime.stop_managed_process("mcp-shared", "a", T1)
        await runtime.start_managed_process("mcp-shared", proc("echo", process_id="c"), T1)


async def test_exited_records_are_kept_up_to_a_bound(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path, limits={"max_completed_processes": 2})
    async with runtime.running():
        await session(runtime)
        for name in ("a", "b", "c"):
            process, _ = await runtime.start_managed_process(
                "mcp-shared", proc("exit", "0", process_id=name), T1
            )
            with anyio.fail_after(PATIENCE):
                await process.finished.wait()
        with pytest.raises(BoxManagedProcessNotFoundError):
            runtime.managed_process("mcp-shared", "a", T1)
        assert runtime.managed_process("mcp-shared", "c", T1).info().exit_code == 0


async def test_sessions_with_a_running_process_are_not_reaped(tmp_path: Path) -> None:
    from .helpers import FakeClock

    clock = FakeClock()
    runtime, _ = fake_runtime(tmp_path, clock=clock, sessions={"ttl_sec": 1})
    async with runtime.running():
        await runtime.create_session(BoxSpec(session_id="s"), T1)
        await runtime.start_managed_process("s", proc("echo"), T1)
        clock.advance(10)
        assert await runtime.reap_expired() == 0
        await runtime.stop_managed_process("s", "p1", T1)
        clock.advance(10)
        assert await runtime.reap_expired() == 1


async def test_the_session_info_counts_running_processes(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path)
    async with runtime.running():
        await session(runtime)
        await runtime.start_managed_process("mcp-shared", proc("echo", process_id="a"), T1)
        await runtime.start_managed_process("mcp-shared", proc("echo", process_id="b"), T1)
        assert runtime.get_session("mcp-shared", T1).managed_process_count == 2
        assert runtime.processes.running_count() == 2
