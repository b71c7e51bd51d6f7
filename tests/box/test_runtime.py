"""The runtime on the fake backend: sessions, locks, capacity, timeouts, reaper, tenancy."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from box_runtime.backends.fake import FakeBackend
from box_runtime.errors import (
    BoxBackendUnavailableError,
    BoxCapacityExceededError,
    BoxMountDeniedError,
    BoxQuotaExceededError,
    BoxSessionConflictError,
    BoxSessionDeletedError,
    BoxSessionNotFoundError,
    BoxValidationError,
)
from box_runtime.models import BoxExecutionStatus, BoxNetworkMode, BoxSpec
from box_runtime.quota import filesystem_quota_unavailable
from box_runtime.runtime import BoxRuntime
from box_runtime.sessions import Tenant
from tests.support.waiting import PATIENCE

from .helpers import FakeClock, fake_runtime

pytestmark = pytest.mark.anyio

T1 = Tenant("inst-1", "ws-1", 1)


def spec(session_id: str = "s1", cmd: str = "echo hi", **fields: object) -> BoxSpec:
    return BoxSpec.model_validate({"session_id": session_id, "cmd": cmd, **fields})


async def test_exec_creates_the_session_on_demand_and_reuses_it(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with runtime.running():
        first = await runtime.exec(spec(), T1)
        second = await runtime.exec(spec(cmd="echo again"), T1)
        assert (first.stdout, second.stdout) == ("hi\n", "again\n")
        assert first.status is BoxExecutionStatus.COMPLETED
        assert first.exit_code == 0
        assert first.backend_name == "fake"
        assert len(fake.started) == 1


async def test_incompatible_reuse_is_a_conflict_naming_the_field(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path)
    async with runtime.running():
        await runtime.create_session(spec(memory_mb=256), T1)
        with pytest.raises(BoxSessionConflictError, match="memory_mb=256") as caught:
            await runtime.exec(spec(memory_mb=512), T1)
        assert caught.value.details["field"] == "memory_mb"


async def test_session_ids_are_kept_verbatim_and_never_collide(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with runtime.running():
        for session_id in ("a/b", "a:b", "a b", "A/B"):
            await runtime.create_session(spec(session_id), T1)
        names = {plan.name for plan in fake.started}
        dirs = {plan.session_dir for plan in fake.started}
        assert len(names) == len(dirs) == 4
        assert {s.key.session_id for s in runtime.sessions(T1)} == {"a/b", "a:b", "a b", "A/B"}


async def test_each_session_has_its_own_workspace(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with runtime.running():
        await runtime.create_session(spec("one"), T1)
        await runtime.create_session(spec("two"), T1)
        one, two = (plan.mounts[0].host_path for plan in fake.started)
        assert one != two
        assert await anyio.Path(one).is_dir()
        assert await anyio.Path(two).is_dir()
        assert all(plan.workspace_owned for plan in fake.started)


async def test_tenants_do_not_see_each_other(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    other = Tenant("inst-1", "ws-2", 1)
    async with runtime.running():
        await runtime.create_session(spec("shared-name"), T1)
        await runtime.create_session(spec("shared-name"), other)
        assert len(fake.started) == 2
        assert [s.key.session_id for s in runtime.sessions(T1)] == ["shared-name"]
        assert runtime.sessions(None) == []
        with pytest.raises(BoxSessionNotFoundError):
            runtime.get_session("shared-name", None)


async def test_global_capacity(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path, limits={"max_sessions": 2})
    async with runtime.running():
        await runtime.create_session(spec("a"), T1)
        await runtime.create_session(spec("b"), T1)
        with pytest.raises(BoxCapacityExceededError) as caught:
            await runtime.create_session(spec("c"), T1)
        assert caught.value.details["limit"] == 2
        assert caught.value.details["actual"] == 2
        await runtime.delete_session("a", T1)
        await runtime.create_session(spec("c"), T1)


async def test_one_session_runs_one_command_at_a_time(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with runtime.running():
        info = await runtime.create_session(spec(), T1)
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(runtime.exec, spec(cmd="wait go"), T1)
            await fake.exec_started.wait()
            # Only one of the three may be inside the sandbox; release them one by one.
            fake.gate("go").set()
        assert fake.max_running(info.backend_session_id) == 1
        assert len(fake.execs(info.backend_session_id)) == 3


async def test_sessions_run_in_parallel(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    running: list[str] = []

    async with runtime.running(), anyio.create_task_group() as tg:
        for name in ("p1", "p2", "p3"):
            tg.start_soon(runtime.exec, spec(name, "wait all"), T1)
        with anyio.fail_after(PATIENCE):
            while True:  # bounded polling of real state: all three execs inside at once
                running = [h for h, box in fake.sandboxes.items() if box.running]
                if len(running) == 3:
                    break
                await anyio.lowlevel.checkpoint()
        fake.gate("all").set()
    assert len(running) == 3


async def test_a_timed_out_command_is_killed_but_the_session_stays(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with runtime.running():
        info = await runtime.create_session(spec(), T1)
        result = await runtime.exec(spec(cmd="wait never", timeout_sec=1), T1)
        assert result.status is BoxExecutionStatus.TIMED_OUT
        assert result.exit_code is None
        assert "timed out after 1 seconds" in result.stderr
        after = await runtime.exec(spec(cmd="echo alive"), T1)
        assert after.stdout == "alive\n"
        assert fake.stopped == []
        assert runtime.get_session("s1", T1).backend_session_id == info.backend_session_id


async def test_a_vanished_sandbox_is_recreated(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with runtime.running():
        before = await runtime.create_session(spec(), T1)
        fake.vanish(before.backend_session_id)
        result = await runtime.exec(spec(cmd="echo back"), T1)
        assert result.stdout == "back\n"
        after = runtime.get_session("s1", T1)
        assert after.backend_session_id != before.backend_session_id
        assert len(fake.started) == 2


async def test_deleting_a_session_removes_sandbox_and_directory(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with runtime.running():
        info = await runtime.create_session(spec(), T1)
        session_dir = fake.started[0].session_dir
        await runtime.delete_session("s1", T1)
        assert fake.stopped == [info.backend_session_id]
        assert not await anyio.Path(session_dir).exists()
        with pytest.raises(BoxSessionNotFoundError):
            await runtime.delete_session("s1", T1)


async def test_delete_while_a_command_runs_ends_it_at_once(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with runtime.running():
        await runtime.create_session(spec(), T1)
        errors: list[BoxSessionDeletedError] = []

        async def run(command: str) -> None:
            try:
                await runtime.exec(spec(cmd=command, timeout_sec=3600), T1)
            except BoxSessionDeletedError as exc:
                errors.append(exc)

        # The gate is never opened: the running command (and the one queued behind it)
        # must end because the session went, not because the command finished.
        with anyio.fail_after(PATIENCE):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run, "wait forever")
                await fake.exec_started.wait()
                tg.start_soon(run, "echo queued")
                await anyio.wait_all_tasks_blocked()
                await runtime.delete_session("s1", T1)
        assert sorted(e.code for e in errors) == ["box_session_deleted"] * 2
        assert any("while its command ran" in e.message for e in errors)
        assert fake.sandboxes["fake-1"].running == 0
        assert len(fake.started) == 1  # not recreated


async def test_ttl_reaper_removes_idle_sessions_only(tmp_path: Path) -> None:
    clock = FakeClock()
    runtime, fake = fake_runtime(tmp_path, clock=clock, sessions={"ttl_sec": 60})
    async with runtime.running():
        await runtime.create_session(spec("idle"), T1)
        await runtime.create_session(spec("keep", persistent=True), T1)
        await runtime.create_session(spec("busy"), T1)
        clock.advance(30)
        assert await runtime.reap_expired() == 0
        async with anyio.create_task_group() as tg:
            tg.start_soon(runtime.exec, spec("busy", "wait busy"), T1)
            await fake.exec_started.wait()
            clock.advance(31)
            assert await runtime.reap_expired() == 1  # only "idle"
            fake.gate("busy").set()
        assert {s.key.session_id for s in runtime.sessions(T1)} == {"keep", "busy"}


async def test_background_reaper_runs(tmp_path: Path) -> None:
    clock = FakeClock()
    runtime, fake = fake_runtime(
        tmp_path, clock=clock, sessions={"ttl_sec": 1, "reaper_interval_sec": 0.01}
    )
    async with runtime.running():
        await runtime.create_session(spec("old"), T1)
        [session] = runtime.sessions(T1)
        clock.advance(5)
        with anyio.fail_after(PATIENCE):
            await session.closed.wait()  # nothing but the reaper removes it
        assert runtime.sessions(T1) == []
        assert fake.stopped == [session.handle]


async def test_shutdown_keeps_persistent_sessions_running(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with runtime.running():
        keep = await runtime.create_session(spec("keep", persistent=True), T1)
        drop = await runtime.create_session(spec("drop"), T1)
    assert fake.stopped == [drop.backend_session_id]
    assert keep.backend_session_id in fake.live()
    assert fake.closed


async def test_profile_locks_fields_and_caps_the_timeout(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path, local={"profile": "offline_readonly"})
    async with runtime.running():
        info = await runtime.create_session(
            spec(network="on", read_only_rootfs=False, timeout_sec=999), T1
        )
        assert info.network is BoxNetworkMode.OFF  # locked
        assert info.read_only_rootfs  # locked
        assert info.cpus == 0.5  # profile default for an unset field
        plan = fake.started[0]
        assert not plan.network
        result = await runtime.exec(spec(cmd="echo x", timeout_sec=999), T1)
        assert result.ok
        (ran,) = fake.execs(info.backend_session_id)
        assert ran.timeout_sec == 60  # offline_readonly's max_timeout_sec, not 999


async def test_default_image(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path, local={"image": "my/image:1"})
    async with runtime.running():
        assert (await runtime.create_session(spec("a"), T1)).image == "my/image:1"
        assert (await runtime.create_session(spec("b", image="x:2"), T1)).image == "x:2"


async def test_strict_session_ids(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path, sessions={"strict_ids": True})
    async with runtime.running():
        with pytest.raises(BoxValidationError, match="strict"):
            await runtime.create_session(spec("global"), T1)
        await runtime.create_session(spec("mcp-shared"), T1)
        await runtime.create_session(spec("lb-box-" + "0" * 64), T1)


async def test_empty_command_is_refused(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path)
    async with runtime.running():
        with pytest.raises(BoxValidationError, match="cmd"):
            await runtime.exec(spec(cmd="   "), T1)


async def test_host_mounts_follow_the_allowlist(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    allowed = tmp_path / "mounts" / "tenant"
    async with runtime.running():
        await runtime.create_session(spec("ok", host_path=str(allowed)), T1)
        assert await anyio.Path(allowed).is_dir()  # created on demand in the allowed root
        assert fake.started[0].mounts[0].host_path == str(await anyio.Path(allowed).resolve())
        assert not fake.started[0].workspace_owned
        with pytest.raises(BoxMountDeniedError, match="outside"):
            await runtime.create_session(spec("bad", host_path=str(tmp_path / "elsewhere")), T1)
        with pytest.raises(BoxMountDeniedError, match="protected"):
            await runtime.create_session(spec("etc", host_path="/etc"), T1)
        skill = tmp_path / "skills" / "a"
        await anyio.Path(skill).mkdir(parents=True)
        with pytest.raises(BoxMountDeniedError, match=r"extra_mounts\[0\]"):
            await runtime.create_session(
                spec("extra", extra_mounts=[{"host_path": str(skill), "mount_path": "/s"}]), T1
            )
        assert not await anyio.Path(tmp_path / "elsewhere").exists()


async def test_a_symlink_planted_while_the_host_path_is_made_cannot_redirect_the_mount(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime, fake = fake_runtime(tmp_path)
    target = tmp_path / "mounts" / "tenant"
    outside = tmp_path / "outside"
    outside.mkdir()
    target.parent.mkdir()
    real_makedirs = os.makedirs

    def racing_makedirs(name: str, *args: Any, **kwargs: Any) -> None:
        # An attacker who controls the parent swaps in a symlink right after the check.
        if os.fspath(name) == str(target):
            os.symlink(outside, target)
        real_makedirs(name, *args, **kwargs)

    async with runtime.running():
        monkeypatch.setattr(os, "makedirs", racing_makedirs)
        with pytest.raises(BoxMountDeniedError, match="outside the allowed mount roots"):
            await runtime.create_session(spec("raced", host_path=str(target)), T1)
        monkeypatch.undo()
        assert fake.started == []


async def test_a_quota_filesystem_bounds_writes_and_deleting_repairs_it(tmp_path: Path) -> None:
    if filesystem_quota_unavailable() is not None:
        pytest.skip(f"no quota filesystems here: {filesystem_quota_unavailable()}")
    runtime, fake = fake_runtime(tmp_path)
    async with runtime.running():
        info = await runtime.create_session(spec(workspace_quota_mb=2), T1)
        assert info.workspace_quota_enforcement == "filesystem"
        full = await runtime.exec(spec(cmd="fill 8000000", workspace_quota_mb=2), T1)
        assert full.exit_code == 1
        assert "No space left" in full.stderr
        report = full.workspace_quota
        assert report is not None
        assert report.limit == 2 * 1024 * 1024
        assert 0 < report.actual <= report.limit  # the kernel stopped it at the quota
        assert f"limit {report.limit} bytes" in full.stderr
        workspace = anyio.Path(fake.started[0].mounts[0].host_path)
        assert (await (workspace / "fill.bin").stat()).st_size <= 2 * 1024 * 1024
        # The session stays usable: a command runs, and deleting the file repairs it.
        assert (await runtime.exec(spec(cmd="echo still", workspace_quota_mb=2), T1)).ok
        await (workspace / "fill.bin").unlink()
        after = await runtime.exec(spec(cmd="fill 1000000", workspace_quota_mb=2), T1)
        assert after.ok
        assert after.workspace_quota is None
        session_dir = fake.started[0].session_dir
        await runtime.delete_session("s1", T1)
        assert not await anyio.Path(session_dir).exists()  # unmounted, then removed


async def test_a_watched_quota_stops_a_growing_command_and_stays_repairable(
    tmp_path: Path,
) -> None:
    runtime, fake = fake_runtime(tmp_path, local={"workspace_quota_enforcement": "watch"})
    async with runtime.running():
        info = await runtime.create_session(spec(workspace_quota_mb=1), T1)
        assert info.workspace_quota_enforcement == "watch"
        with anyio.fail_after(30):
            with pytest.raises(BoxQuotaExceededError) as caught:
                await runtime.exec(spec(cmd="fill 500000000", workspace_quota_mb=1), T1)
        error = caught.value
        assert error.limit == 1024 * 1024
        assert error.actual > error.limit
        assert error.details["files_retained"] is True
        assert "the command was stopped" in error.message
        assert fake.started[0].max_file_bytes == 1024 * 1024  # per-file cap for the sandbox
        workspace = anyio.Path(fake.started[0].mounts[0].host_path)
        # Over the quota, a command that does not grow the workspace still runs...
        over = await runtime.exec(spec(cmd="echo over", workspace_quota_mb=1), T1)
        assert over.stdout == "over\n"
        assert over.workspace_quota is not None
        assert over.workspace_quota.actual == (await (workspace / "fill.bin").stat()).st_size
        assert over.workspace_quota.limit == 1024 * 1024
        # ...and deleting the files repairs the session.
        await (workspace / "fill.bin").unlink()
        repaired = await runtime.exec(spec(cmd="echo ok", workspace_quota_mb=1), T1)
        assert repaired.workspace_quota is None


async def test_an_unknown_backend_is_a_clear_error(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path, backend="e2b")
    async with runtime.running():
        info = await runtime.backend_info()
        assert not info.available
        assert info.reason is not None
        assert "not available in this build" in info.reason
        with pytest.raises(BoxBackendUnavailableError, match="not available in this build"):
            await runtime.exec(spec(), T1)


async def test_business_actions_use_defaults_when_no_init_arrives(tmp_path: Path) -> None:
    runtime = BoxRuntime(
        factories={"fake": lambda _config: FakeBackend()}, environ={}, cwd=str(tmp_path)
    )
    runtime.config.init_wait_sec = 0.01
    async with runtime.running():
        # Defaults select "local" (docker, nsjail), which this factory table lacks.
        info = await runtime.backend_info()
        assert not info.available
        await runtime.configure({"backend": "fake", "state_dir": str(tmp_path / "s")})
        assert (await runtime.backend_info()).available


async def test_without_box_init_only_the_first_call_waits(tmp_path: Path) -> None:
    fake = FakeBackend()
    runtime = BoxRuntime(
        factories=dict.fromkeys(("docker", "nsjail"), lambda _config: fake),
        environ={},
        cwd=str(tmp_path),
    )
    runtime.config.state_dir = str(tmp_path / "state")
    runtime.config.init_wait_sec = 0.05
    async with runtime.running():
        first = await runtime.exec(spec(cmd="echo first"), T1)  # waits once, then defaults
        # Had the wait been per call, this one would now wait an hour.
        runtime.config.init_wait_sec = 3600
        with anyio.fail_after(PATIENCE):
            second = await runtime.exec(spec(cmd="echo second"), T1)
        assert (first.stdout, second.stdout) == ("first\n", "second\n")
        assert not runtime.initialized.is_set()


async def test_env_config_counts_as_initialised(tmp_path: Path) -> None:
    runtime = BoxRuntime(
        environ={"LANGBOT_BOX_CONFIG": '{"sessions": {"ttl_sec": 7}}'}, cwd=str(tmp_path)
    )
    assert runtime.initialized.is_set()
    assert runtime.config.sessions.ttl_sec == 7
    with pytest.raises(BoxValidationError, match="JSON"):
        BoxRuntime(environ={"LANGBOT_BOX_CONFIG": "{nope"}, cwd=str(tmp_path))


async def test_generations_are_retired(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with runtime.running():
        old = await runtime.create_session(spec(), T1)
        await runtime.retire_generations("inst-1", "ws-1", 2)
        assert fake.stopped == [old.backend_session_id]


async def test_startup_sweeps_only_this_deployments_non_persistent_directories(
    tmp_path: Path,
) -> None:
    from box_runtime.session_dirs import write_marker

    sessions = tmp_path / "state" / "sessions"
    dirs: dict[str, Path] = {}
    for name, deployment, persistent in (
        ("ours", "test", False),
        ("ours-persistent", "test", True),
        ("foreign", "other", False),
    ):
        dirs[name] = sessions / name
        await anyio.Path(dirs[name], "workspace").mkdir(parents=True)
        write_marker(
            str(dirs[name]),
            deployment_id=deployment,
            session_id=name,
            workspace_uuid=None,
            persistent=persistent,
        )
    dirs["unmarked"] = sessions / "unmarked"
    await anyio.Path(dirs["unmarked"]).mkdir()
    runtime, _ = fake_runtime(tmp_path)
    async with runtime.running():
        assert (await runtime.backend_info()).available
        left = {p.name async for p in anyio.Path(sessions).iterdir()}
    assert left == {"ours-persistent", "foreign", "unmarked"}


async def test_storage_analysis_adds_up_the_sandbox_directories(tmp_path: Path) -> None:
    from box_runtime.storage_report import analyse

    runtime, fake = fake_runtime(tmp_path)
    host = tmp_path / "mounts" / "host"
    async with runtime.running():
        await runtime.create_session(spec("one"), T1)
        await runtime.create_session(spec("two", host_path=str(host)), T1)
        one, _ = fake.started
        await anyio.Path(one.mounts[0].host_path, "w.bin").write_bytes(b"w" * 1000)
        await anyio.Path(one.tmp_dir, "t.bin").write_bytes(b"t" * 300)
        await anyio.Path(one.home_dir, ".cache").mkdir()
        await anyio.Path(one.home_dir, ".cache", "c.bin").write_bytes(b"c" * 50)
        await anyio.Path(host, "h.bin").write_bytes(b"h" * 7)
        # A link the sandbox planted to a big host file is not followed.
        big = tmp_path / "outside.bin"
        await anyio.Path(big).write_bytes(b"x" * 100_000)
        await anyio.Path(one.mounts[0].host_path, "link").symlink_to(big)
        report = await analyse(runtime.current_backend, runtime.sessions(T1), max_entries=1000)
    by_key = {d.key: d for d in report.directories}
    assert by_key["session_workspaces"].size_bytes == 1000 + len(str(big))  # the link itself
    assert by_key["session_temp"].size_bytes == 300
    assert by_key["session_caches"].size_bytes == 50
    assert by_key["session_workspaces"].path == "/workspace (2 sandbox sessions)"
    assert by_key["session:two"].size_bytes == 7  # host-mounted: shown, not added up
    assert by_key["session:two"].parent_key == "session_workspaces"
    assert report.size_bytes == 1000 + len(str(big)) + 300 + 50
    assert report.active_sessions == 2
