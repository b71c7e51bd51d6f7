"""``lbp dev`` runs a runner written in seed 003's Protocol v1 style (issue 23): the
runtime lists its declaration, the session passes it to the local host, so its
``context`` policy inlines the conversation's tail and its artifacts come back."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from langbot_plugin.dev import DevSession, load_script
from tests.dev.helpers import write_script

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "seed_notes"


async def test_the_seed_style_runner_under_lbp_dev(tmp_path: Path) -> None:
    plugin = Path(shutil.copytree(EXAMPLE, tmp_path / "seed_notes"))
    model = load_script(write_script(tmp_path, ["Noted.", "Noted again."]))
    async with DevSession(plugin, model=model, state_dir=tmp_path / "state") as dev:
        first = await dev.send("buy milk")
        second = await dev.send("buy bread")
    assert first.text == "Noted. [turn 1, 0 inlined, 1 notes, artifacts: not_found]"
    assert second.text == "Noted again. [turn 2, 2 inlined, 2 notes, artifacts: 6 bytes]"
