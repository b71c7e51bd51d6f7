"""``lbp comp Runner`` and ``lbp comp Page`` against the reference 0.7.18 CLI, both run
as the author runs them (answers on stdin): the same kind, folder, manifest group and
plugin-API imports, and no question the reference does not ask. Skipped without the
reference SDK (``LBP_REFERENCE_PYTHON``) unless ``LBP_REQUIRE_REFERENCE=1``."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.cli.helpers import lbp, ok
from tests.support.reference import need_reference


def _reference_plugin(parent: Path) -> Path:
    done = subprocess.run(
        [str(need_reference().parent / "lbp"), "init", "refplug"],
        input="tester\nA plugin\n",
        capture_output=True,
        text=True,
        cwd=parent,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return parent / "refplug"


def _reference_comp(plugin: Path, kind: str, answers: str) -> None:
    done = subprocess.run(
        [str(need_reference().parent / "lbp"), "comp", kind],
        input=answers,
        capture_output=True,
        text=True,
        cwd=plugin,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _shape(plugin: Path, name: str) -> dict[str, object]:
    """Kind, folder, manifest group and the plugin-API modules the code imports."""
    (found,) = list((plugin / "components").rglob(f"{name}.yaml"))
    data = yaml.safe_load(found.read_text())
    code = found.with_suffix(".py")
    modules: set[str] = set()
    if code.is_file():
        for node in ast.walk(ast.parse(code.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("langbot_"):
                modules.add(node.module or "")
    groups = yaml.safe_load((plugin / "manifest.yaml").read_text())["spec"]["components"]
    return {
        "kind": data["kind"],
        "folder": found.parent.relative_to(plugin).as_posix(),
        "groups": {k: v["fromDirs"] for k, v in groups.items()},
        "usages": (data.get("spec") or {}).get("usages"),
        "imports": modules,
    }


@pytest.fixture
def plugins(tmp_path: Path) -> tuple[Path, Path]:
    reference = _reference_plugin(tmp_path)
    ok("init", "ours", "--author", "tester", "-y", "--no-git", cwd=tmp_path)
    return reference, tmp_path / "ours"


def test_a_runner_is_scaffolded_as_the_reference_does(plugins: tuple[Path, Path]) -> None:
    reference, ours = plugins
    _reference_comp(reference, "Runner", "helper\nHelps\n")
    done = lbp("comp", "Runner", cwd=ours, stdin="helper\nHelps\n")
    assert done.code == 0, done.err
    assert _shape(ours, "helper") == _shape(reference, "helper")


def test_a_page_asks_what_the_reference_asks(plugins: tuple[Path, Path]) -> None:
    reference, ours = plugins
    _reference_comp(reference, "Page", "dash\n")
    done = lbp("comp", "Page", cwd=ours, stdin="dash\n")
    assert done.code == 0, done.err
    ours_shape, reference_shape = _shape(ours, "dash"), _shape(reference, "dash")
    # our Page also has its backend (dash.py): the reference's scaffold cannot start
    ours_shape["imports"] = set()
    assert ours_shape == reference_shape
