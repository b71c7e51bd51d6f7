"""``box.backend: local`` probes Docker, then Podman's socket, then nsjail, on the real
engines, and says which it chose and why it skipped the others (log, backend info,
``box_status`` and ``/readyz``).

An engine is made unreachable by pointing its address at a socket that does not exist.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from box_runtime.child import BoxUnavailableError, box_with_backend, start_box
from box_runtime.models import BoxSpec
from box_runtime.runtime import BoxRuntime
from tests.box.conformance.candidates import BUSYBOX, PODMAN_SOCKET
from tests.box.helpers import jail_state, remove_containers, require

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

NOWHERE = "unix:///nonexistent/engine.sock"


@pytest.fixture
def state() -> Iterator[Path]:
    yield from jail_state("lbp-choice-")


def local(state: Path, *, docker: str = "", podman: str = "") -> dict[str, Any]:
    """``backend: local`` with each engine's address ("": its default)."""
    return {
        "backend": "local",
        "deployment_id": "ch" + secrets.token_hex(4),
        "state_dir": str(state / "state"),
        "local": {"image": BUSYBOX},
        "docker": {"base_url": docker, "pull_missing_images": False},
        "podman": {"base_url": podman or f"unix://{PODMAN_SOCKET}", "pull_missing_images": False},
    }


async def test_local_takes_podman_when_docker_is_unreachable(
    state: Path, caplog: pytest.LogCaptureFixture
) -> None:
    require("podman")
    caplog.set_level(logging.INFO, logger="box_runtime")
    runtime = BoxRuntime(config=local(state, docker=NOWHERE), environ={}, cwd=str(state))
    async with runtime.running():
        info = await runtime.backend_info()
        assert (info.name, info.available, info.requested) == ("podman", True, "local")
        assert list(info.skipped) == ["docker"]
        assert "/nonexistent/engine.sock" in info.skipped["docker"]
        result = await runtime.exec(BoxSpec(session_id="s1", cmd="echo on podman"), None)
        assert result.stdout == "on podman\n", result.stderr
    chosen = [r.getMessage() for r in caplog.records if "box.backend local" in r.getMessage()]
    assert chosen, caplog.text
    assert chosen[0].startswith("Box: box.backend local: using podman (docker skipped: ")


async def test_local_takes_docker_first(state: Path) -> None:
    require("docker")
    config = local(state)
    runtime = BoxRuntime(config=config, environ={}, cwd=str(state))
    try:
        async with runtime.running():
            info = await runtime.backend_info()
            assert (info.name, info.skipped) == ("docker", {})
            await runtime.exec(BoxSpec(session_id="s1", cmd="true"), None)
    finally:
        remove_containers(config["deployment_id"])


async def test_a_missing_sandbox_image_is_said_when_the_backend_is_chosen(
    state: Path, caplog: pytest.LogCaptureFixture
) -> None:
    require("docker")
    caplog.set_level(logging.INFO, logger="box_runtime")
    config = local(state)
    config["local"]["image"] = "lbp-absent-" + secrets.token_hex(4) + ":1"
    runtime = BoxRuntime(config=config, environ={}, cwd=str(state))
    async with runtime.running():
        info = await runtime.backend_info()  # chooses docker: the engine itself is fine
        assert (info.name, info.available) == ("docker", False)
        assert info.reason is not None
        assert config["local"]["image"] in info.reason
    said = [r for r in caplog.records if config["local"]["image"] in r.getMessage()]
    assert said, caplog.text
    assert said[0].levelno == logging.WARNING
    assert said[0].getMessage().startswith(f"Box: image {config['local']['image']} is not")
    assert said[0].getMessage().endswith("(until then /readyz answers 503)")


async def test_local_falls_to_nsjail_and_says_why_both_engines_were_skipped(
    state: Path,
) -> None:
    require("nsjail")
    config = local(state, docker=NOWHERE, podman=NOWHERE)
    runtime = BoxRuntime(config=config, environ={}, cwd=str(state))
    async with runtime.running():
        info = await runtime.backend_info()
        assert info.name == "nsjail"
        assert list(info.skipped) == ["docker", "podman"]
        assert info.skipped["podman"].startswith("no Podman engine reachable")


async def test_readyz_and_status_name_the_choice_and_the_skipped_engine(state: Path) -> None:
    require("podman")
    async with (
        start_box(config=local(state, docker=NOWHERE)) as box,
        httpx.AsyncClient() as http,
        box.client() as client,
    ):
        answer = await http.get(f"http://127.0.0.1:{box.port}/readyz", timeout=60)
        status = await client.status()
    body = answer.json()
    assert answer.status_code == 200, body
    assert body["backend"]["name"] == "podman"
    assert body["backend"]["requested"] == "local"
    assert "docker" in body["backend"]["skipped"]
    assert status.backend.skipped == body["backend"]["skipped"]


async def test_box_with_backend_takes_the_first_that_works_or_says_why_none_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """How ``lbp dev --box``, ``lbp demo`` and the harness's ``BoxSandbox`` get a Box."""
    require("nsjail")
    monkeypatch.delenv("E2B_API_KEY", raising=False)  # e2b refuses: no key
    refused = "^the Box's e2b backend does not work here: e2b: no E2B API key"
    with pytest.raises(BoxUnavailableError, match=refused):  # unwrapped
        async with box_with_backend("e2b", session_id="s"):
            pytest.fail("no backend works")
    async with box_with_backend("e2b", "nsjail", session_id="s", stdio=True) as (box, name):
        assert name == "nsjail"
        assert (await box.exec(session_id="s", cmd="echo hi")).stdout == "hi\n"
