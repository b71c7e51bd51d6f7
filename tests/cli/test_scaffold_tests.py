"""The tests ``lbp init`` and ``lbp comp`` write pass out of the box, run the way an
author runs them (``pytest`` in the plugin folder, a child process), and they test
something: a changed answer fails them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.helpers import KINDS

pytestmark = pytest.mark.timeout(300)


def pytest_in(folder: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def test_the_scaffolded_tests_pass(full_plugin: Path) -> None:
    tests = sorted(p.name for p in (full_plugin / "tests").iterdir() if p.suffix == ".py")
    assert tests == sorted(["test_plugin.py", *(f"test_{k.lower()}.py" for k in KINDS)])
    done = pytest_in(full_plugin)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "14 passed" in done.stdout, done.stdout


def test_they_fail_when_the_plugin_answers_otherwise(full_plugin: Path) -> None:
    runner = full_plugin / "components/agent_runner/agentrunner.py"
    runner.write_text(runner.read_text().replace("you said", "you typed"))
    tool = full_plugin / "components/tools/tool.py"
    tool.write_text(tool.read_text().replace('"words": len', '"words": 1 + len'))
    done = pytest_in(full_plugin)
    assert done.returncode == 1, done.stdout + done.stderr
    failed = sorted(line.split("::")[0] for line in done.stdout.splitlines() if "FAILED" in line)
    assert failed == [
        "FAILED tests/test_agentrunner.py",
        "FAILED tests/test_agentrunner.py",
        "FAILED tests/test_tool.py",
    ], done.stdout
