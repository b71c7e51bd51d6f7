"""Compatibility proof: the reference host-side Box client (0.7.18) works unchanged.

Needs the reference SDK in its own venv, ``LBP_REFERENCE_VENV`` or by default
``.bench/ref-venv`` of this checkout (the one ``.ci/run`` and ``make bench`` create:
``python3 -m venv .bench/ref-venv && .bench/ref-venv/bin/pip install
langbot-plugin==0.7.18``). Skipped when that venv is absent, unless
``LBP_REQUIRE_REFERENCE=1``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from box_runtime.runtime import BoxRuntime

from .helpers import fake_runtime, require_docker, served_box

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
REFERENCE_VENV = Path(os.environ.get("LBP_REFERENCE_VENV", REPO / ".bench" / "ref-venv"))
REFERENCE_PYTHON = REFERENCE_VENV / "bin" / "python"
SCRIPT = Path(__file__).parent / "scripts" / "reference_client.py"


def need_reference() -> None:
    if not REFERENCE_PYTHON.exists():
        venv = REFERENCE_PYTHON.parent.parent
        reason = (
            f"no reference SDK venv at {venv} (python3 -m venv {venv} && "
            f"{venv}/bin/pip install langbot-plugin==0.7.18)"
        )
        if os.environ.get("LBP_REQUIRE_REFERENCE") == "1":
            pytest.fail(reason)  # CI provides it: a skip there would hide a broken proof
        pytest.skip(reason)


async def run_reference(url: str, image: str) -> dict[str, Any]:
    result = await anyio.run_process(
        [str(REFERENCE_PYTHON), str(SCRIPT), url, image],
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
    need_reference()
    # The reference client's box_init says backend "local": let the fake answer as docker.
    runtime, _ = fake_runtime(tmp_path, fake_names=("fake", "docker"))
    async with served_box(runtime) as box:
        steps = await run_reference(box.url, "any-image")
    check(steps, "fake")


@pytest.mark.docker
async def test_reference_client_on_docker(tmp_path: Path) -> None:
    need_reference()
    require_docker()
    import secrets

    runtime = BoxRuntime(
        config={"deployment_id": "ref" + secrets.token_hex(4), "state_dir": str(tmp_path / "s")},
        environ={},
        cwd=str(tmp_path),
    )
    async with served_box(runtime) as box:
        steps = await run_reference(box.url, "lbp-test-busybox:latest")
    check(steps, "docker")
