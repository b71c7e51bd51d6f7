"""Plugin requirements go into an environment the worker really uses (offline index)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from langbot_plugin.runtime.dependencies import (
    DependencyError,
    DependencyInstaller,
    read_requirements,
)
from tests.support.pypi import local_index

# pip creates environments and installs into them
pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]


@pytest.fixture
def index_url(tmp_path: Path) -> Iterator[str]:
    with local_index(tmp_path / "index") as url:
        yield url


def test_sdk_and_comments_are_dropped(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text(
        "# deps\nlangbot-plugin>=0.5\nrequests==2.0  # http\n\n"
    )
    assert read_requirements(tmp_path) == ["requests==2.0"]
    (tmp_path / "requirements.txt").write_text("-e .\n")
    with pytest.raises(DependencyError, match="may not use"):
        read_requirements(tmp_path)


async def test_no_requirements_use_the_runtime_interpreter(tmp_path: Path) -> None:
    import sys

    installer = DependencyInstaller(tmp_path / "envs")
    assert await installer.ensure(tmp_path) == sys.executable


async def test_requirement_is_importable_from_the_workers_interpreter(
    tmp_path: Path, index_url: str
) -> None:
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "requirements.txt").write_text("lbp-probe-dep==1.0\nlangbot-plugin\npydantic\n")
    installer = DependencyInstaller(
        tmp_path / "envs", index_url=index_url, trusted_hosts=("127.0.0.1",)
    )
    python = await installer.ensure(plugin)
    probe = "import lbp_probe_dep, langbot_plugin, pydantic; print(lbp_probe_dep.VALUE)"
    done = await anyio.run_process([python, "-c", probe])
    assert done.stdout.decode().strip() == "42"
    # pydantic is already satisfied by the runtime: nothing of it lands in the env
    assert not list((tmp_path / "envs").rglob("pydantic*"))
    # the same requirements reuse the finished environment untouched
    complete = next((tmp_path / "envs").glob("*/.complete"))
    stamp = complete.stat().st_mtime_ns
    other = tmp_path / "other-plugin"
    other.mkdir()
    (other / "requirements.txt").write_text(
        "# same needs, other plugin\nlbp-probe-dep==1.0\npydantic\n"
    )
    assert await installer.ensure(other) == python
    assert complete.stat().st_mtime_ns == stamp


async def test_pip_failure_is_reported_and_nothing_is_left(tmp_path: Path, index_url: str) -> None:
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "requirements.txt").write_text("lbp-no-such-package==9.9\n")
    installer = DependencyInstaller(tmp_path / "envs", index_url=index_url)
    with pytest.raises(DependencyError) as info:
        await installer.ensure(plugin)
    assert "lbp-no-such-package" in info.value.message
    assert sorted(p.name for p in (tmp_path / "envs").iterdir()) == []
