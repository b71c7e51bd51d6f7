"""Every example under ``examples/`` is a complete plugin: it passes ``lbp build --check``
and its own tests, run as its author would run them (``pytest`` in its folder, a child
process, with the example's own ``pytest.ini``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from langbot_plugin.cli.packaging import check_package

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ALL = sorted(p.parent.name for p in EXAMPLES.glob("*/manifest.yaml"))


def test_the_readme_lists_every_example() -> None:
    readme = (EXAMPLES.parent / "README.md").read_text(encoding="utf-8")
    assert [name for name in ALL if f"examples/{name}" not in readme] == []
    assert len(ALL) >= 7


@pytest.mark.parametrize("name", ALL)
def test_the_example_is_a_complete_plugin(name: str, tmp_path: Path) -> None:
    folder = EXAMPLES / name
    check_package(folder, tmp_path)  # raises with one line per problem
    assert (folder / "README.md").is_file()
    assert (folder / "pytest.ini").is_file()
    assert sorted(folder.glob("tests/test_*.py")), f"{name} has no tests"


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", ALL)
def test_the_examples_own_tests_pass(name: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs"],
        cwd=EXAMPLES / name,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert " passed" in done.stdout
    assert "skipped" not in done.stdout or os.environ.get("LBP_REQUIRE_NSJAIL") != "1"
