"""The E2B backend beyond the conformance core, on the real e2b SDK and the stand-in.

Every test serves a fresh stand-in of E2B's network boundary on 127.0.0.1
(``tests/support/e2b_standin``) and reads its request log: what the backend sends is
the behaviour under test (only changed files synced, timeouts extended, sandboxes
killed), and its errors are the SDK's own exceptions, mapped to our codes.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from e2b import AsyncSandbox

from box_runtime.backends import select_backend
from box_runtime.backends.e2b import E2BBackend
from box_runtime.config import BoxConfig, E2BConfig
from box_runtime.errors import (
    BoxBackendUnavailableError,
    BoxExportRefusedError,
    BoxValidationError,
)
from box_runtime.models import BoxSpec
from box_runtime.runtime import BoxRuntime
from box_runtime.sessions import Session, Tenant
from tests.support.e2b_standin import StandIn, run_standin
from tests.support.e2b_standin.thread import standin_reason
from tests.support.waiting import wait_until

from .helpers import FakeClock, jail_state, read_files_of

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

T = Tenant("inst-1", "ws-1", 1)


@pytest.fixture(autouse=True)
def _standin_possible() -> None:
    reason = standin_reason()
    if reason is not None:
        if os.environ.get("LBP_REQUIRE_E2B_STANDIN") == "1":
            pytest.fail(f"LBP_REQUIRE_E2B_STANDIN=1 but {reason}")
        pytest.skip(reason)


@dataclass
class Setup:
    standin: StandIn
    runtime: BoxRuntime
    clock: FakeClock
    backends: list[E2BBackend]

    def session(self, session_id: str = "s1") -> Session:
        (found,) = [s for s in self.runtime.sessions(T) if s.key.session_id == session_id]
        return found

    def uploads(self) -> list[tuple[str, ...]]:
        return [entry.paths for entry in self.standin.routes("upload")]

    def downloads(self) -> list[str]:
        return [entry.paths[0] for entry in self.standin.routes("download")]


def spec(cmd: str, session_id: str = "s1", **fields: Any) -> BoxSpec:
    return BoxSpec.model_validate({"session_id": session_id, "cmd": cmd, **fields})


def e2b_config(standin: StandIn, **extra: Any) -> dict[str, Any]:
    url = standin.url
    return {
        "api_key": standin.api_key,
        "api_url": url,
        "sandbox_url": url,
        "http_version": "1.1",
        **extra,
    }


@pytest.fixture
def state() -> Any:
    yield from jail_state("lbp-e2b-")


def make_runtime(
    standin: StandIn, state: Path, clock: FakeClock, backends: list[E2BBackend], **config: Any
) -> BoxRuntime:
    def factory(box: BoxConfig) -> E2BBackend:
        backend = E2BBackend(
            box.section("e2b", E2BConfig), ttl_sec=box.sessions.ttl_sec, clock=clock
        )
        backends.append(backend)
        return backend

    e2b = e2b_config(standin, **config.pop("e2b", {}))
    full = {
        "backend": "e2b",
        "deployment_id": "e2btest",
        "state_dir": str(state / "state"),
        "local": {"allowed_mount_roots": [str(state / "mounts")]},
        "e2b": e2b,
        **config,
    }
    return BoxRuntime(
        config=full, factories={"e2b": factory}, environ={}, cwd=str(state), clock=clock
    )


@pytest.fixture
async def setup(state: Path) -> AsyncGenerator[Setup]:
    async with run_standin() as standin:
        clock = FakeClock()
        backends: list[E2BBackend] = []
        runtime = make_runtime(
            standin, state, clock, backends, sessions={"ttl_sec": 600}, e2b={"retries": 1}
        )
        async with runtime.running():
            yield Setup(standin, runtime, clock, backends)
        assert standin.alive() == []  # closing the Box killed every sandbox it made


# --------------------------------------------------------------------------- sync


async def test_an_exec_after_one_host_change_uploads_that_file_only(setup: Setup) -> None:
    await setup.runtime.exec(spec("true"), T)
    workspace = Path(setup.session().workspace_dir)
    for name in ("a.txt", "b.txt", "deep/c.txt"):
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(f"{name}\n")
    first = await setup.runtime.exec(spec("cat a.txt b.txt deep/c.txt"), T)
    assert first.stdout == "a.txt\nb.txt\ndeep/c.txt\n"
    assert setup.uploads()[-1] == (
        "/workspace/a.txt",
        "/workspace/b.txt",
        "/workspace/deep/c.txt",
    )
    uploads, downloads = len(setup.uploads()), len(setup.downloads())

    (workspace / "b.txt").write_text("changed\n")
    second = await setup.runtime.exec(spec("cat b.txt"), T)
    assert second.stdout == "changed\n"
    assert setup.uploads()[uploads:] == [("/workspace/b.txt",)]
    assert setup.downloads()[downloads:] == []  # nothing came back that the host sent

    before = len(setup.standin.log)
    assert (await setup.runtime.exec(spec("true"), T)).exit_code == 0
    routes = [entry.route for entry in setup.standin.log[before:]]
    assert routes == ["start", "list_dir"]  # no change: no upload, no download


async def test_what_a_command_writes_or_deletes_comes_back_alone(setup: Setup) -> None:
    await setup.runtime.exec(spec("echo 1 > keep.txt; echo 2 > gone.txt; echo 3 > edit.txt"), T)
    workspace = Path(setup.session().workspace_dir)
    names = sorted([p.name async for p in anyio.Path(workspace).iterdir()])
    assert names == ["edit.txt", "gone.txt", "keep.txt"]
    downloads = len(setup.downloads())
    await setup.runtime.exec(spec("rm gone.txt; echo changed > edit.txt; mkdir -p new/dir"), T)
    assert setup.downloads()[downloads:] == ["/workspace/edit.txt"]
    assert not (workspace / "gone.txt").exists()
    assert (workspace / "edit.txt").read_text() == "changed\n"
    assert (workspace / "keep.txt").read_text() == "1\n"
    assert (workspace / "new" / "dir").is_dir()
    assert not setup.uploads()[-1:] or "/workspace/keep.txt" not in setup.uploads()[-1]


async def test_the_sync_never_writes_through_a_link_on_the_host(
    setup: Setup, tmp_path: Path
) -> None:
    await setup.runtime.exec(spec("mkdir -p d && echo one > d/f"), T)
    workspace = Path(setup.session().workspace_dir)
    assert (workspace / "d" / "f").read_text() == "one\n"
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "d" / "f").unlink()
    (workspace / "d").rmdir()
    (workspace / "d").symlink_to(outside)
    result = await setup.runtime.exec(spec("mkdir -p d && echo two > d/f"), T)
    assert result.exit_code == 0
    assert list(outside.iterdir()) == []  # the sandbox's d/f never went through the link


# --------------------------------------------------------------------------- lifetime


async def test_a_deleted_session_kills_its_sandbox(setup: Setup) -> None:
    await setup.runtime.exec(spec("true"), T)
    handle = setup.session().handle
    assert [s.sandbox_id for s in setup.standin.alive()] == [handle]
    await setup.runtime.delete_session("s1", T)
    assert setup.standin.alive() == []
    assert [e.sandbox_id for e in setup.standin.routes("kill")] == [handle]


async def test_an_expired_session_kills_its_sandbox(setup: Setup) -> None:
    await setup.runtime.exec(spec("true"), T)
    setup.clock.advance(599)
    assert await setup.runtime.reap_expired() == 0
    assert len(setup.standin.alive()) == 1
    setup.clock.advance(2)
    assert await setup.runtime.reap_expired() == 1
    assert setup.standin.alive() == []


async def test_use_extends_the_sandbox_timeout_a_quarter_period_at_a_time(setup: Setup) -> None:
    await setup.runtime.exec(spec("true"), T)
    (record,) = setup.standin.alive()
    period = 600 + 60  # the TTL plus box.e2b.timeout_grace_sec
    assert record.timeouts == [period]  # set at creation
    setup.clock.advance(period / 4 - 1)
    await setup.runtime.exec(spec("true"), T)
    assert record.timeouts == [period]  # used soon after: no extension call
    setup.clock.advance(2)
    await setup.runtime.exec(spec("true"), T)
    assert record.timeouts == [period, period]
    assert [e.route for e in setup.standin.routes("timeout")] == ["timeout"]


async def test_a_sandbox_e2b_ended_is_recreated_on_next_use(setup: Setup) -> None:
    await setup.runtime.exec(spec("echo kept > kept.txt"), T)
    (record,) = setup.standin.alive()
    setup.standin.kill(record)  # E2B ended it (its timeout, an operator)
    again = await setup.runtime.exec(spec("cat kept.txt"), T)
    assert again.stdout == "kept\n"  # the new sandbox got the host workspace
    (fresh,) = setup.standin.alive()
    assert fresh.sandbox_id != record.sandbox_id == record.sandbox_id
    assert setup.session().handle == fresh.sandbox_id


async def test_the_sandbox_ends_at_its_e2b_timeout_without_the_box(state: Path) -> None:
    async with run_standin() as standin:
        backends: list[E2BBackend] = []
        runtime = make_runtime(
            standin,
            state,
            FakeClock(),
            backends,
            sessions={"ttl_sec": 1},
            e2b={"timeout_grace_sec": 0},
        )
        async with runtime.running():
            await runtime.exec(spec("true"), T)
            # E2B's own timer (the stand-in's), not the Box's reaper, ends it.
            await wait_until(lambda: standin.alive() == [], seconds=30, interval=0.05)
            assert [e.route for e in standin.routes("expired")] == ["expired"]
            assert (await runtime.exec(spec("echo back"), T)).stdout == "back\n"


async def test_startup_kills_what_an_earlier_run_of_the_deployment_left(
    state: Path,
) -> None:
    async with run_standin() as standin:
        opts = e2b_config(standin)
        labels = {"langbot.box.deployment": "e2btest", "langbot.box.persistent": "false"}
        orphan = await AsyncSandbox.create(metadata=labels, **opts)
        persistent = await AsyncSandbox.create(
            metadata={**labels, "langbot.box.persistent": "true"}, **opts
        )
        other = await AsyncSandbox.create(
            metadata={**labels, "langbot.box.deployment": "someone-else"}, **opts
        )
        runtime = make_runtime(standin, state, FakeClock(), [])
        async with runtime.running():
            await runtime.backend()
            alive = {s.sandbox_id for s in standin.alive()}
            assert orphan.sandbox_id not in alive
            assert {persistent.sandbox_id, other.sandbox_id} <= alive


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("status", "kind", "retryable"),
    [(401, "authentication", False), (429, "rate_limited", True), (503, "rate_limited", True)],
)
async def test_control_plane_errors_map_to_our_codes(
    setup: Setup, status: int, kind: str, retryable: bool
) -> None:
    # box.e2b.retries is 1 here: a busy answer is tried again once, then reported.
    creates = 1 if status == 401 else 2  # a rejected key is not retried
    setup.standin.fail_next("create", status, "refused by the stand-in", times=creates)
    with pytest.raises(BoxBackendUnavailableError) as caught:
        await setup.runtime.exec(spec("true"), T)
    assert caught.value.code == "box_backend_unavailable"
    assert caught.value.details["e2b"] == kind
    assert caught.value.retryable is retryable
    assert len(setup.standin.routes("create")) == creates
    if status != 401:  # one busy answer only: the SDK's retry gets through
        setup.standin.fail_next("create", status, "busy once")
    assert (await setup.runtime.exec(spec("echo fine"), T)).stdout == "fine\n"


async def test_an_unknown_template_is_a_validation_error(setup: Setup) -> None:
    setup.standin.fail_next("create", 404, "template 'nope' not found")
    with pytest.raises(BoxValidationError, match="template 'nope' not found") as caught:
        await setup.runtime.exec(spec("true", image="nope"), T)
    assert caught.value.code == "box_validation"
    assert setup.standin.alive() == []


async def test_a_wrong_api_key_is_refused_with_its_reason(state: Path) -> None:
    async with run_standin() as standin:
        runtime = make_runtime(standin, state, FakeClock(), [], e2b={"api_key": "wrong"})
        async with runtime.running():
            with pytest.raises(BoxBackendUnavailableError) as caught:
                await runtime.exec(spec("true"), T)
            assert caught.value.details["e2b"] == "authentication"
            assert "401" in str(caught.value)


async def test_readiness_asks_e2b_whether_it_answers_the_key(state: Path) -> None:
    async with run_standin() as standin:
        clock = FakeClock()
        good = make_runtime(standin, state, clock, [], e2b={"retries": 0})
        wrong = make_runtime(standin, state, clock, [], e2b={"api_key": "wrong", "retries": 0})
        async with good.running(), wrong.running():
            info = await good.backend_info()
            assert (info.name, info.available, info.reason) == ("e2b", True, None)
            info = await wrong.backend_info()  # the key is there, E2B refuses it
            assert (info.name, info.available) == ("e2b", False)
            assert info.reason is not None
            assert "401" in info.reason
            lists = len(standin.routes("list"))
            await good.backend_info()  # /readyz is polled: the answer is reused a while
            assert len(standin.routes("list")) == lists
    clock.advance(60)
    async with good.running():  # the API is gone now
        info = await good.backend_info()
        assert (info.name, info.available) == ("e2b", False)
        assert info.reason is not None
        assert "E2B list sandboxes failed (connection)" in info.reason


async def test_no_api_key_makes_the_backend_unusable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("E2B_API_KEY", raising=False)
    selection = await select_backend(BoxConfig(backend="e2b"), {"e2b": make_factory()})
    assert selection.backend is None
    assert "no E2B API key" in selection.reason
    monkeypatch.setenv("E2B_API_KEY", "e2b_from_the_environment")
    selection = await select_backend(BoxConfig(backend="e2b"), {"e2b": make_factory()})
    assert selection.backend is not None


def make_factory() -> Callable[[BoxConfig], E2BBackend]:
    return lambda box: E2BBackend(box.section("e2b", E2BConfig), ttl_sec=box.sessions.ttl_sec)


# --------------------------------------------------------------------------- export


async def test_export_refuses_links_directories_and_missing_files(setup: Setup) -> None:
    write = "echo data > real.txt; ln -s real.txt link.txt; mkdir -p adir"
    assert (await setup.runtime.exec(spec(write), T)).exit_code == 0
    cases = {
        "/workspace/link.txt": "symlink",
        "/workspace/adir": "not_regular",
        "/workspace/none.txt": "missing",
    }
    for path, reason in cases.items():
        with pytest.raises(BoxExportRefusedError) as caught:
            await read_files_of(setup.runtime, "s1", T, ["/workspace/real.txt", path], "run-1")
        assert caught.value.details["reason"] == reason, path
    (exported,), _ = await read_files_of(setup.runtime, "s1", T, ["/workspace/real.txt"], "run-1")
    assert (exported.data, exported.size) == (b"data\n", 5)
