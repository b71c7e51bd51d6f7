"""The released LangBot host's own export code against our ``lbp box``.

LangBot 4.11.2 reads the files a runner exports through an exec in the run's Box (a
script printing them as base64 JSON) and tells a clipped answer from a broken one only
by the reference's clip marker at the end of stdout. An export whose answer passes the
Box's 1 MiB output limit must reach the runner (and so the model) as the host's size
error, with the threshold and what to do, never as ``invalid_response``.

The host's code runs in its own venv (``tests/support/in_released_host/export_files.py``),
with its own pinned SDK and with ours in its place; the Box is our ``lbp box`` on
Docker, initialised by the host's connector.
"""

from __future__ import annotations

import pytest

from tests.support.released_host import CHECKOUT, run_with_our_box

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

MIB = 1024 * 1024


@pytest.mark.parametrize("sdk", ["host's", "ours"])
async def test_an_oversized_export_reaches_the_runner_as_the_hosts_size_error(sdk: str) -> None:
    payload = {
        "files": {"/workspace/small.bin": 1000, "/workspace/big.bin": 900_000},
        "exports": [["/workspace/small.bin"], ["/workspace/big.bin"]],
        "overlay": str(CHECKOUT) if sdk == "ours" else "",
    }
    report = await run_with_our_box("export_files.py", "docker", payload)
    assert "exports" in report, report
    small, big = report["exports"]
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
