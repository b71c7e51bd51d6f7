"""Warm sandboxes: adoption, what does not match, refill, bounds, drain, and isolation."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from box_runtime.child import start_box
from box_runtime.client import BoxClient
from box_runtime.errors import BoxValidationError
from box_runtime.models import BoxSpec
from box_runtime.runtime import BoxRuntime
from box_runtime.sessions import Tenant
from tests.support.waiting import wait_until

from .conformance.candidates import BUSYBOX, _labelled  # pyright: ignore[reportPrivateUsage]
from .helpers import CONTEXT, fake_runtime, require_docker, served_box

pytestmark = pytest.mark.anyio

T = Tenant("inst-1", "ws-1", 1)


def spec(session_id: str, cmd: str = "", **fields: Any) -> BoxSpec:
    return BoxSpec.model_validate({"session_id": session_id, "cmd": cmd, **fields})


async def full(runtime: BoxRuntime, count: int) -> None:
    await wait_until(lambda: runtime.pool.idle_count() == count, seconds=60, interval=0.01)


async def test_a_new_session_adopts_a_warm_sandbox_and_the_pool_refills(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with runtime.running():
        await runtime.configure({"pool": {"size": 2}})
        await full(runtime, 2)
        warm = set(fake.live())
        assert len(fake.started) == 2
        info = await runtime.create_session(spec("s1"), T)
        assert info.backend_session_id in warm  # no engine create for this session
        assert (await runtime.exec(spec("s1", "echo adopted"), T)).stdout == "adopted\n"
        await full(runtime, 2)  # refilled in the background
        assert len(fake.started) == 3
        assert runtime.pool.adopted == 1
    assert fake.live() == []  # closing the runtime drained the pool and the session


@pytest.mark.parametrize(
    "fields",
    [
        {"memory_mb": 256},
        {"network": "on"},
        {"image": "other:latest"},
        {"persistent": True},
        {"workspace_quota_mb": 5},
        {"host_path": "HOST"},
        {"extra_mounts": "HOST"},
    ],
)
async def test_a_request_that_does_not_match_gets_a_normal_create(
    tmp_path: Path, fields: dict[str, Any]
) -> None:
    runtime, fake = fake_runtime(tmp_path)
    project = tmp_path / "mounts" / "project"
    project.mkdir(parents=True)
    if fields.get("host_path") == "HOST":
        fields = {"host_path": str(project)}
    if fields.get("extra_mounts") == "HOST":  # the only field the signature leaves out
        fields = {"extra_mounts": [{"host_path": str(project), "mount_path": "/data"}]}
    async with runtime.running():
        await runtime.configure({"pool": {"size": 1}})
        await full(runtime, 1)
        warm = set(fake.live())
        info = await runtime.create_session(spec("s1", **fields), T)
        assert info.backend_session_id not in warm
        assert runtime.pool.idle_count() == 1
        assert runtime.pool.adopted == 0


async def test_other_images_have_their_own_sandboxes_and_sizes_follow_the_config(
    tmp_path: Path,
) -> None:
    runtime, fake = fake_runtime(tmp_path, local={"image": "base:1"})
    async with runtime.running():
        await runtime.configure({"pool": {"size": 1, "images": {"py:3": 2}}})
        await full(runtime, 3)
        assert sorted(plan.image for plan in fake.started) == ["base:1", "py:3", "py:3"]
        python = await runtime.create_session(spec("s1", image="py:3"), T)
        assert python.backend_session_id in set(fake.live())
        assert runtime.pool.adopted == 1
        await full(runtime, 3)
        await runtime.configure({"pool": {"size": 0, "images": {"py:3": 0}}})  # merged
        await full(runtime, 0)  # trimmed: what no longer matches is removed
        assert fake.live() == [python.backend_session_id]


def test_the_pool_is_bounded() -> None:
    from box_runtime.config import merge_config

    with pytest.raises(BoxValidationError, match="at most 32"):
        merge_config({}, {"pool": {"size": 20, "images": {"a": 13}}})
    with pytest.raises(BoxValidationError, match=r"pool\.size"):
        merge_config({}, {"pool": {"size": 33}})


async def test_a_failing_create_is_retried_later_not_in_a_loop(tmp_path: Path) -> None:
    from box_runtime.backends.fake import FakeBackend

    class Failing(FakeBackend):
        async def start(self, plan: Any) -> str:
            self.started.append(plan)
            raise BoxValidationError("no such image")

    runtime, fake = fake_runtime(tmp_path, Failing())
    async with runtime.running():
        await runtime.configure({"pool": {"size": 2}})
        await wait_until(lambda: len(fake.started) >= 2, seconds=30, interval=0.01)
        # The runtime still serves, creating sessions normally... and failing alike.
        with pytest.raises(BoxValidationError):
            await runtime.create_session(spec("s1"), T)
        attempts = [p for p in fake.started if p.session_id.startswith("pool-")]
        # No loop: the first fill and at most one more look (one refill pass can be
        # woken by the configuration change it raced with); then RETRY_SEC.
        assert len(attempts) <= 4
    assert list((tmp_path / "state" / "sessions").iterdir()) == []


# --------------------------------------------------------------------------- Docker


@pytest.fixture
def deployment() -> Iterator[str]:
    require_docker()
    deployment_id = "p" + secrets.token_hex(5)
    yield deployment_id
    _labelled(dict)(deployment_id, True)


def docker_pool(tmp_path: Path, deployment: str, **pool: Any) -> dict[str, Any]:
    """A Box configuration on the test engine (busybox, no pulls) with ``box.pool``."""
    return {
        "backend": "docker",
        "deployment_id": deployment,
        "state_dir": str(tmp_path / "state"),
        "local": {"image": BUSYBOX},
        "docker": {"pull_missing_images": False},
        "pool": pool,
    }


@pytest.mark.docker
async def test_nothing_of_one_session_reaches_the_next_on_docker(
    tmp_path: Path, deployment: str
) -> None:
    import docker  # type: ignore[import-untyped]

    runtime = BoxRuntime(
        config=docker_pool(tmp_path, deployment, size=1), environ={}, cwd=str(tmp_path)
    )
    leftovers = _labelled(dict)
    client = docker.APIClient()
    try:
        async with runtime.running():
            await runtime.configure({})
            await full(runtime, 1)
            # The startup cleanup of this deployment's leftovers ran before the pool
            # filled: the warm sandbox is on the engine and is the one adopted.
            warm = leftovers(deployment, False)
            first = await runtime.exec(
                spec(
                    "a",
                    "echo secret > /workspace/a.txt; echo t > /tmp/t; "
                    "sleep 1000 >/dev/null 2>&1 & echo started",
                ),
                T,
            )
            assert first.stdout == "started\n"
            (session_a,) = runtime.sessions(T)
            assert [session_a.handle] == warm
            handle_a, workspace_a = session_a.handle, session_a.workspace_dir
            labels_a = client.inspect_container(handle_a)["Config"]["Labels"]
            await runtime.delete_session("a", T)
            await full(runtime, 1)  # a new warm sandbox, made after a was deleted
            probe = "ls -A /workspace; ls /tmp; ps -o args | grep -c '^sleep 1000' || true"
            second = await runtime.exec(spec("b", probe), T)
            (session_b,) = runtime.sessions(T)
            assert runtime.pool.adopted == 2
            assert session_b.handle != handle_a
            assert session_b.workspace_dir != workspace_a
            lines = second.stdout.split()
            assert "a.txt" not in lines
            assert "t" not in lines
            assert lines[-1] == "0"  # no process of session a
            labels_b = client.inspect_container(session_b.handle)["Config"]["Labels"]
            assert labels_b["langbot.box.session"] != labels_a["langbot.box.session"]
            assert labels_b["langbot.box.key"] != labels_a["langbot.box.key"]
            assert not await anyio.Path(workspace_a).exists()
            assert handle_a not in leftovers(deployment, False)
        assert leftovers(deployment, False) == []  # drained on close
    finally:
        client.close()


@pytest.mark.docker
@pytest.mark.timeout(150)
async def test_sigterm_drains_the_pool_of_a_served_box(tmp_path: Path, deployment: str) -> None:
    import signal

    config = docker_pool(tmp_path, deployment, size=2)
    leftovers = _labelled(dict)
    log = tmp_path / "box.log"
    with log.open("wb") as stderr:
        async with start_box("--log-level", "debug", config=config, log=stderr) as box:
            process = box.process
            # The pool fills at startup, before any request; a sandbox is idle once its
            # check command ran (the agent records each command in /tmp/.lbp-exec).
            await wait_until(lambda: checked(deployment) == 2, seconds=60)
            process.send_signal(signal.SIGTERM)
            with anyio.fail_after(60):
                code = await process.wait()
    # The Box's own log says what went wrong when one of these fails.
    told = log.read_text(errors="replace")[-4000:]
    assert code == 0, told
    assert leftovers(deployment, False) == [], told
    assert list((tmp_path / "state" / "sessions").iterdir()) == [], told


def checked(deployment: str) -> int:
    """How many of the deployment's running containers have run a command.

    The pool's containers come and go while this looks (created, not yet started), so
    a container the engine refuses an exec in counts as not checked yet.
    """
    import docker.errors  # type: ignore[import-untyped]

    api = docker.APIClient()
    try:
        count = 0
        running = {"label": [f"langbot.box.deployment={deployment}"], "status": "running"}
        for container in api.containers(filters=running):
            try:
                probe = api.exec_create(container["Id"], ["test", "-f", "/tmp/.lbp-exec"])["Id"]
                api.exec_start(probe)
                count += api.exec_inspect(probe)["ExitCode"] == 0
            except docker.errors.APIError:
                continue
        return count
    finally:
        api.close()


async def test_box_status_reports_no_pool_when_none_is_configured(tmp_path: Path) -> None:
    runtime, _fake = fake_runtime(tmp_path)
    async with (
        served_box(runtime) as served,
        BoxClient.connect(served.url, context=CONTEXT) as client,
    ):
        pool = (await client.status()).pool
    assert (pool.enabled, pool.configured, pool.target, pool.ready, pool.specs) == (
        False,
        0,
        0,
        0,
        [],
    )


@pytest.mark.docker
async def test_box_status_reports_a_real_docker_pool(tmp_path: Path, deployment: str) -> None:
    python, missing = "lbp-test-python:latest", f"lbp-no-such-image-{deployment}:latest"
    wanted = {"size": 1, "images": {python: 1, missing: 1}, "refill_concurrency": 3}
    runtime = BoxRuntime(
        config=docker_pool(tmp_path, deployment, **wanted), environ={}, cwd=str(tmp_path)
    )
    async with (
        served_box(runtime) as served,
        BoxClient.connect(served.url, context=CONTEXT) as client,
    ):

        async def settled() -> bool:
            pool = (await client.status()).pool
            failed = next((spec for spec in pool.specs if spec.image == missing), None)
            return pool.ready == 2 and failed is not None and failed.last_error is not None

        await wait_until(settled, seconds=90, interval=0.05)
        pool = (await client.status()).pool
        by_image = {spec.image: spec for spec in pool.specs}
        assert (pool.enabled, pool.configured, pool.target, pool.refill_concurrency) == (
            True,
            3,
            3,
            3,
        )
        assert sorted(by_image) == sorted([BUSYBOX, python, missing])
        for image in (BUSYBOX, python):
            assert (by_image[image].target, by_image[image].ready) == (1, 1)
            assert by_image[image].last_error is None
            assert by_image[image].profile == "default"
        assert (by_image[missing].target, by_image[missing].ready) == (1, 0)
        assert missing in str(by_image[missing].last_error)
        assert pool.last_error == by_image[missing].last_error
        assert by_image[missing].last_error_at is not None
        # The engine agrees: two warm containers of this deployment.
        assert len(_labelled(dict)(deployment, False)) == 2
        # A session adopts the busybox one; the pool counts it and refills.
        await client.create_session(session_id="s1")
        await wait_until(
            lambda: runtime.pool.idle_count() == 2 and runtime.pool.adopted == 1, seconds=60
        )
        after = (await client.status()).pool
        assert (after.ready, after.adopted, after.created) == (2, 1, 3)
