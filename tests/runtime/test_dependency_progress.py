"""Installing a plugin's requirements is logged step by step, pip's progress included."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from langbot_plugin.runtime.dependencies import DependencyInstaller
from tests.support.pypi import local_index

pytestmark = pytest.mark.anyio


@pytest.fixture
def index_url(tmp_path: Path) -> Iterator[str]:
    with local_index(tmp_path / "index") as url:
        yield url


async def test_an_install_logs_counted_steps_and_pips_lines(
    tmp_path: Path, index_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "requirements.txt").write_text("lbp-probe-dep==1.0\n")
    installer = DependencyInstaller(tmp_path / "envs", index_url=index_url)
    with caplog.at_level(logging.INFO, logger="langbot_plugin.runtime.dependencies"):
        await installer.ensure(plugin, name="tester/probe")
    lines = [r.getMessage() for r in caplog.records]
    steps = [line for line in lines if "] " in line and line.startswith("tester/probe: [")]
    assert [s.split("]", 1)[0] for s in steps] == [
        "tester/probe: [1/3",
        "tester/probe: [2/3",
        "tester/probe: [3/3",
    ]
    assert "pip install 1 requirement(s): lbp-probe-dep==1.0" in steps[1]
    pip_lines = [line for line in lines if "pip: " in line]
    assert any("Collecting lbp-probe-dep==1.0" in line for line in pip_lines), lines
    assert any("Successfully installed lbp-probe-dep-1.0" in line for line in pip_lines), lines
    # the second plugin with the same needs reuses the environment without a word at INFO
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="langbot_plugin.runtime.dependencies"):
        await installer.ensure(plugin, name="tester/probe")
    assert caplog.records == []
