"""The wire fuzzer in the test suite: a bounded campaign against each real daemon.

A fixed seed (``LBP_FUZZ_SEED`` picks another) and a fixed number of frames, so a run
is repeatable and its cost bounded; ``make fuzz`` runs the same campaign for minutes
with fresh seeds (docs/testing.md, "The wire fuzzer").
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.box.helpers import require_nsjail
from tests.fuzz.campaign import Budget, fuzz_box, fuzz_runtime

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SEED = int(os.environ.get("LBP_FUZZ_SEED", "24"))
BUDGET = Budget(batches=6, batch_size=25)


@pytest.mark.timeout(300)
async def test_lbp_rt_and_its_worker_survive_the_fuzzer(tmp_path: Path) -> None:
    report = await fuzz_runtime(tmp_path, SEED, BUDGET)
    assert report.ok, report.describe()
    assert report.total.frames >= 4 * BUDGET.batches * BUDGET.batch_size
    assert report.total.coded_errors > 0  # refusals were answered, with their codes


@pytest.mark.timeout(300)
async def test_lbp_box_and_its_relay_survive_the_fuzzer(tmp_path: Path) -> None:
    require_nsjail()
    report = await fuzz_box(tmp_path, SEED, BUDGET)
    assert report.ok, report.describe()
    assert report.total.frames >= 2 * BUDGET.batches * BUDGET.batch_size
    assert report.total.coded_errors > 0
