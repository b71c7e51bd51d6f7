"""The suite's time limit (tests/timeouts.py) turns each kind of hang into a failure."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

HANGS = """
import threading
import time

import anyio
import pytest

CLEANED = []


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.timeout(1)
async def test_async_hang(tmp_path):
    never = anyio.Event()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(never.wait)
            await never.wait()
    finally:
        print("cleanup ran")


@pytest.mark.anyio
@pytest.mark.timeout(1)
async def test_blocks_the_event_loop():
    threading.Event().wait()


@pytest.mark.timeout(1)
def test_sync_hang():
    threading.Event().wait()


@pytest.mark.anyio
async def test_within_the_limit():
    await anyio.sleep(0)
"""

IGNORES_EVERYTHING = """
import time

import anyio
import pytest


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.timeout(1)
async def test_swallows_cancellation_and_interrupts():
    # Two loops: the one interrupt (a signal, so it lands between any two bytecodes)
    # may land on the inner loop's jump, outside the inner try; the outer try takes it.
    # Swallowed cancellations come back at once: sleeping (in C, without the GIL)
    # between them keeps this from spinning while faulthandler reads its frames.
    while True:
        try:
            while True:
                try:
                    await anyio.sleep_forever()
                except BaseException:
                    time.sleep(0.02)
        except BaseException:
            pass
"""


#: Seconds between the layers of tests/timeouts.py in the inner runs. Each layer must act
#: before the next one: on a loaded machine the main thread may wait a while for the CPU
#: before it runs the signal handler, so the window is a few seconds, not one.
GRACE = 3


def run_inner(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["tests.timeouts"]\n')
    (tmp_path / "test_inner.py").write_text(source)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "-s", "--tb=native",
         "-o", f"test_timeout_grace={GRACE}", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )  # fmt: skip


@pytest.mark.timeout(120)  # a child pytest with three hangs in it
def test_hangs_fail_with_where_they_waited(tmp_path: Path) -> None:
    done = run_inner(tmp_path, HANGS)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "3 failed, 1 passed" in out
    # an async hang is cancelled: its cleanup runs and the report names the await
    assert "FAILED test_inner.py::test_async_hang - Failed: test timed out after 1 s" in out
    assert "cleanup ran" in out
    line = HANGS.splitlines().index("            await never.wait()") + 1
    assert f'test_inner.py", line {line}, in test_async_hang\n    await never.wait()' in out
    # what cancellation cannot stop is interrupted where it blocks
    for name in ("test_blocks_the_event_loop", "test_sync_hang"):
        assert f"FAILED test_inner.py::{name} - tests.timeouts.TestTimeout" in out
    assert f"test still running {GRACE} s after its 1 s limit" in out
    assert out.count("threading.Event().wait()") >= 2


@pytest.mark.timeout(120)
def test_a_test_that_ignores_every_interruption_ends_the_run(tmp_path: Path) -> None:
    done = run_inner(tmp_path, IGNORES_EVERYTHING)
    assert done.returncode == 1
    assert "test_inner.py::test_swallows_cancellation_and_interrupts: test still running" in (
        done.stderr
    )
    # faulthandler's dump, then the exit, two graces after the limit
    assert f"Timeout (0:00:{1 + 2 * GRACE:02d})!" in done.stderr
