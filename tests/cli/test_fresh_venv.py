"""The author commands from an installed wheel in a fresh virtual environment.

Offline by construction: the project's wheel is built from this working tree with the
test environment's own build backend (``make dist``: ``pip wheel --no-deps
--no-build-isolation --no-index``), installed with ``--no-deps --no-index`` into a new venv made without pip
(``pip --python`` installs into it), and the new venv reaches the already installed
dependencies (pydantic, PyYAML...) through a ``.pth`` line naming this environment's
site-packages. That line is a plain path, so the ``.pth`` files there (among them the
editable install of this tree) are not processed: ``langbot_plugin`` comes from the
wheel, templates included, exactly as ``pip install langbot-plugin`` would lay it out.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest
import yaml

from tests.cli.helpers import KINDS, archive_names

REPO = Path(__file__).resolve().parents[2]


def run(*args: str | Path, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, f"{args} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.mark.slow
@pytest.mark.timeout(600)  # builds a wheel and a venv, pip-installs into it
def test_init_comp_build_from_a_wheel_in_a_fresh_venv(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    pip = (sys.executable, "-m", "pip")
    # The wheel docs/plugin-authoring.md tells authors to build: make dist.
    run("make", "-s", "-C", REPO, "dist", f"DIST={wheels}", f"BIN={Path(sys.executable).parent}")
    (wheel,) = wheels.glob("langbot_plugin-*.whl")

    fresh = tmp_path / "fresh"
    venv.create(fresh, with_pip=False)
    python = fresh / "bin" / "python"
    fresh_site = Path(
        run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip()
    )
    (fresh_site / "_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run(*pip, "--python", python, "install", "--no-deps", "--no-index", "-q", wheel)

    where = run(python, "-c", "import langbot_plugin; print(langbot_plugin.__file__)", cwd=tmp_path)
    assert Path(where.strip()).is_relative_to(fresh_site)
    lbp = fresh / "bin" / "lbp"
    assert "init" in run(lbp, "--help", cwd=tmp_path)
    assert "langbot-plugin" in run(lbp, "ver", cwd=tmp_path)

    work = tmp_path / "work"
    work.mkdir()
    run(lbp, "init", "fresh-plugin", "--author", "someone", "-y", "--no-git", cwd=work)
    root = work / "fresh-plugin"
    for kind in KINDS:
        run(lbp, "comp", kind, kind.lower(), "-y", cwd=root)
    tested = run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=root)
    assert "14 passed" in tested  # the shipped harness runs the scaffold's own tests
    run(lbp, "build", cwd=root)

    package = root / "dist" / "someone-fresh-plugin-0.1.0.lbpkg"
    names = archive_names(package)
    assert names[0] == "manifest.yaml"
    assert "components/pages/page.html" in names
    assert "components/agent_runner/agentrunner.py" in names
    with zipfile.ZipFile(package) as archive:
        manifest = yaml.safe_load(archive.read("manifest.yaml"))
    assert sorted(manifest["spec"]["components"]) == sorted(KINDS)
    assert [page["id"] for page in manifest["spec"]["pages"]] == ["page"]
