"""What ``lbp init`` and ``lbp comp`` write type-checks under pyright strict, as
docs/plugin-authoring.md promises: one plugin with a component of every kind (both runner
generations included), checked against this environment's SDK."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.helpers import KINDS

PYRIGHT = Path(sys.executable).with_name("pyright")


@pytest.mark.timeout(300)
def test_every_scaffold_passes_pyright_strict(pristine_plugin: Path, tmp_path: Path) -> None:
    if shutil.which("node") is None:
        pytest.skip("pyright needs Node.js on PATH (its package brings the checker, not node)")
    plugin = Path(shutil.copytree(pristine_plugin, tmp_path / "demo", symlinks=True))
    config = {"typeCheckingMode": "strict"}
    (plugin / "pyrightconfig.json").write_text(json.dumps(config), encoding="utf-8")
    done = subprocess.run(
        [str(PYRIGHT), "--outputjson", "--pythonpath", sys.executable],
        cwd=plugin,
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(done.stdout)
    problems = [
        f"{Path(d['file']).relative_to(plugin)}:{d['range']['start']['line'] + 1}: {d['message']}"
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    ]
    assert problems == [], "\n".join(problems)
    checked = {p.parent.name for p in (plugin / "components").rglob("*.py") if p.stem != "__init__"}
    assert len(checked) == len(KINDS), checked  # every kind's scaffold was there to check
    assert report["summary"]["filesAnalyzed"] >= len(KINDS)
