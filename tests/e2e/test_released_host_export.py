"""The released LangBot host's own export code against our ``lbp box``.

LangBot 4.11.2 reads the files a runner exports through an exec in the run's Box (a
script printing them as base64 JSON) and tells a clipped answer from a broken one only
by the reference's clip marker at the end of stdout. An export whose answer passes the
Box's 1 MiB output limit must reach the runner (and so the model) as the host's size
error, with the threshold and what to do, never as ``invalid_response``.

The host's code runs in its own venv (``tests/support/in_released_host/export_files.py``), with
its own pinned SDK and with ours in its place; the Box is our ``lbp box`` on Docker,
initialised by the host's connector.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import anyio
import pytest

from box_runtime.server import CONTROL_TOKEN_ENV, TRUSTED_INSTANCE_ENV
from tests.box.helpers import box_process, remove_containers, require
from tests.box.mcp_box import scratch_dir
from tests.support.reference import run_json_script
from tests.support.released_host import need_released_host

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

DRIVER = Path(__file__).resolve().parent.parent / "support" / "in_released_host" / "export_files.py"
CHECKOUT = Path(__file__).resolve().parents[2]
INSTANCE = "instance_0b7c2f1e-5a6d-4e3f-9a8b-7c6d5e4f3a2b"
MIB = 1024 * 1024


async def export_through_the_host(backend: str, sdk: str) -> list[dict[str, Any]]:
    python = need_released_host()
    require(backend)
    deployment = "rh" + secrets.token_hex(4)
    token = secrets.token_urlsafe(48)
    with scratch_dir() as state:
        config = {"deployment_id": deployment, "state_dir": str(state / "state")}
        environ = {CONTROL_TOKEN_ENV: token, TRUSTED_INSTANCE_ENV: INSTANCE}
        try:
            async with box_process(config, "--host", "127.0.0.1", environ=environ) as (box, port):
                payload = {
                    "endpoint": f"ws://127.0.0.1:{port}",
                    "token": token,
                    "instance": INSTANCE,
                    "root": str(state / "mounts"),
                    "backend": backend,
                    "image": "lbp-test-python:latest",
                    "files": {"/workspace/small.bin": 1000, "/workspace/big.bin": 900_000},
                    "exports": [["/workspace/small.bin"], ["/workspace/big.bin"]],
                    "overlay": str(CHECKOUT) if sdk == "ours" else "",
                }
                report = await anyio.to_thread.run_sync(
                    run_json_script, python, DRIVER, payload, state
                )
                box.terminate()  # the Box removes its sandboxes as it stops
                await box.wait()
        finally:
            if backend == "docker":
                await anyio.to_thread.run_sync(remove_containers, deployment)
    assert "exports" in report, report
    return report["exports"]


@pytest.mark.parametrize(("backend", "sdk"), [("docker", "host's"), ("docker", "ours")])
async def test_an_oversized_export_reaches_the_runner_as_the_hosts_size_error(
    backend: str, sdk: str
) -> None:
    small, big = await export_through_the_host(backend, sdk)
    # The same path works below the limit: a small file is exported.
    assert small == {"items": [["small.bin", 1000]]}
    # 900,000 bytes are 1.2 MB of base64 on stdout: past the Box's 1 MiB.
    assert "error" in big, big
    error = big["error"]
    assert error["code"] == "box.export.transport_truncated"
    assert error["retryable"] is True
    details = error["details"]
    assert details["limit_type"] == "transport_bytes"
    assert details["limit"] == MIB
    assert details["actual"] > 1_200_000  # the script's whole answer
    assert details["files_retained"] is True
    assert "fits the transport limit" in details["suggested_action"]
    assert big["message"].startswith("LANGBOT_EXPORT_V1:")
