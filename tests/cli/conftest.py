"""A plugin with one component of each kind, scaffolded once per session and copied per test."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli.helpers import scaffold


@pytest.fixture(scope="session")
def pristine_plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scaffold(tmp_path_factory.mktemp("pristine"))


@pytest.fixture
def full_plugin(pristine_plugin: Path, tmp_path: Path) -> Path:
    """A private copy of ``lbp init demo`` + ``lbp comp <Kind> <kind>`` for every kind."""
    return Path(shutil.copytree(pristine_plugin, tmp_path / "demo", symlinks=True))
