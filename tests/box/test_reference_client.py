"""Compatibility proof: the reference host-side Box client (0.7.18) works unchanged.

Needs the reference SDK in its own venv, ``LBP_REFERENCE_VENV`` or by default
``.bench/ref-venv`` of this checkout (the one ``.ci/run`` and ``make bench`` create:
``python3 -m venv .bench/ref-venv && .bench/ref-venv/bin/pip install
langbot-plugin==0.7.18``). Skipped when that venv is absent, unless
``LBP_REQUIRE_REFERENCE=1``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from box_runtime.runtime import BoxRuntime
from tests.support.reference import need_reference

from .helpers import fake_runtime, require_docker, served_box

pytestmark = pytest.mark.anyio

SCRIPT = Path(__file__).parent / "scripts" / "reference_client.py"


async def run_reference(python: Path, url: str, image: str) -> dict[str, Any]:
    result = await anyio.run_process(
        [str(python), str(SCRIPT), url, image],
        check=False,
        stderr=subprocess.PIPE,
    )
    steps = {
        item["step"]: item["value"]
        for item in (json.loads(line) for line in result.stdout.decode().splitlines() if line)
    }
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    assert "connect_failed" not in steps, steps
    return steps


def check(steps: dict[str, Any], backend: str) -> None:
    assert steps["backend"]["name"] == backend
    assert steps["backend"]["available"] is True
    assert steps["create"]["session_id"] == "ref-session"
    exec_result = steps["exec"]
    assert exec_result["stdout"].strip() == "from-reference"
    assert exec_result["status"] == "completed"
    assert exec_result["exit_code"] == 0
    assert [s["session_id"] for s in steps["sessions"]] == ["ref-session"]
    assert steps["status"]["active_sessions"] == 1
    assert steps["not_found"] == "BoxSessionNotFoundError"
    assert steps["validation"] == "BoxValidationError"
    assert steps["after_delete"] == []


async def test_reference_client_on_the_fake_backend(tmp_path: Path) -> None:
    # The reference client's box_init says backend "local": let the fake answer as docker.
    python = need_reference()
    runtime, _ = fake_runtime(tmp_path, fake_names=("fake", "docker"))
    async with served_box(runtime) as box:
        steps = await run_reference(python, box.url, "any-image")
    check(steps, "fake")


@pytest.mark.docker
async def test_reference_client_on_docker(tmp_path: Path) -> None:
    require_docker()
    python = need_reference()
    import secrets

    runtime = BoxRuntime(
        config={"deployment_id": "ref" + secrets.token_hex(4), "state_dir": str(tmp_path / "s")},
        environ={},
        cwd=str(tmp_path),
    )
    async with served_box(runtime) as box:
        steps = await run_reference(python, box.url, "lbp-test-busybox:latest")
    check(steps, "docker")
