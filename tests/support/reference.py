"""The reference SDK's interpreter, for tests that compare our package with it.

``LBP_REFERENCE_PYTHON`` names it, else ``LBP_REFERENCE_VENV/bin/python`` (default
the checkout's ``.bench/ref-venv``, where ``make bench`` and ``.ci/run`` install it): a
venv with ``pip install langbot-plugin==0.7.18``. Without it the
comparison is skipped, or fails when ``LBP_REQUIRE_REFERENCE=1`` (CI provides it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

_DEFAULT_VENV = Path(__file__).resolve().parents[2] / ".bench" / "ref-venv"


def reference_python() -> Path:
    explicit = os.environ.get("LBP_REFERENCE_PYTHON")
    if explicit:
        return Path(explicit)
    venv = os.environ.get("LBP_REFERENCE_VENV")
    return (Path(venv) if venv else _DEFAULT_VENV) / "bin" / "python"


def need_reference() -> Path:
    """The reference interpreter, or skip (fail under ``LBP_REQUIRE_REFERENCE=1``)."""
    python = reference_python()
    if not python.exists():
        venv = python.parent.parent
        reason = (
            f"no reference SDK interpreter at {python} (set LBP_REFERENCE_PYTHON, or: "
            f"python3 -m venv {venv} && {venv}/bin/pip install langbot-plugin==0.7.18)"
        )
        if os.environ.get("LBP_REQUIRE_REFERENCE") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return python


def run_json_script(python: Path | str, script: Path, payload: Any, cwd: Path) -> Any:
    """Run ``script`` under ``python`` with ``payload`` as JSON on stdin; its JSON stdout."""
    done = subprocess.run(
        [str(python), str(script)],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=cwd,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return json.loads(done.stdout)


def our_python() -> str:
    return sys.executable
