"""A plugin with one component of each kind, scaffolded once per session and copied per test."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli.helpers import scaffold


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The first test that uses the scaffolded plugin pays for making it (about 17 s on
    a busy machine), so these tests get a longer time limit (tests/timeouts.py)."""
    for item in items:
        if "full_plugin" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.timeout(180))


@pytest.fixture(scope="session")
def pristine_plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scaffold(tmp_path_factory.mktemp("pristine"))


@pytest.fixture
def full_plugin(pristine_plugin: Path, tmp_path: Path) -> Path:
    """A private copy of ``lbp init demo`` + ``lbp comp <Kind> <kind>`` for every kind."""
    return Path(shutil.copytree(pristine_plugin, tmp_path / "demo", symlinks=True))
