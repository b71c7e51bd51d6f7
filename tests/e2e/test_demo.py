"""The README's first command: the demo runs end to end and says what it did."""

from __future__ import annotations

import os
import sys

import anyio
import pytest

pytestmark = pytest.mark.anyio


@pytest.mark.timeout(180)  # bounded at 120 s inside
async def test_lbp_demo_runs_end_to_end() -> None:
    with anyio.fail_after(120):
        done = await anyio.run_process(
            [sys.executable, "-m", "langbot_plugin.cli.__init__", "demo"], check=False
        )
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    for expected in (
        "installed and running in its own worker process",
        "runner offered to LangBot: plugin:langbot-demo/hello_agent/assistant",
        "assistant > It gives you a small SDK",
        "run completed",
        "command !time -> It is",
        "tool add(2, 40) -> {'sum': 42.0}",
        "done:",
    ):
        assert expected in out, out
    sandboxed = "sandbox said: hello from a sandbox, running as uid" in out
    # without a sandbox backend the demo says so and goes on; CI requires one
    assert sandboxed or (
        "skipping the sandbox part" in out and os.environ.get("LBP_REQUIRE_NSJAIL") != "1"
    ), out
