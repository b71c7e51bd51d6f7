"""Run LangBot's own tests against this package, beside the reference SDK it pins.

    python -m tests.langbot_suite.run CHECKOUT [--langbot 4.11.2] [--venv DIR] [--timeout 120]
                                      [--only reference|ours] [TEST_FILE ...]
    make langbot-tests LANGBOT_SRC=CHECKOUT

``CHECKOUT`` is a LangBot source tree (its ``tests/`` and ``pytest.ini``); without one (and
without ``LANGBOT_SRC``) the run is skipped. The tests run in a venv of the released host:
``pip install langbot==VERSION`` and LangBot's test tools, so ``import langbot`` is the
release and only the tests come from the checkout. First with the SDK that release pins (the
reference), then with this package installed in its place (``pip install --no-deps -e``).

The selection: every test file under ``tests/unit_tests``, ``tests/integration_tests``,
``tests/integration`` and ``tests/smoke`` that imports ``langbot_plugin``, directly, through
its conftests or through the host modules and test helpers it imports (read statically).
The verdict: each test that passes with the reference must pass with ours; a test that fails
with both (a checkout newer than the release) is reported, not counted. Exit 1 when one
regressed. Results go to ``<venv>/../results/{reference,ours}.xml``.
"""

from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

__all__ = ["main", "outcomes", "regressions", "select_tests"]

REPO = Path(__file__).resolve().parents[2]
SUITES = ("tests/unit_tests", "tests/integration_tests", "tests/integration", "tests/smoke")
TEST_TOOLS = ("pytest", "pytest-asyncio", "pytest-cov", "pytest-timeout", "moto")


# --------------------------------------------------------------------------- selection


class _Imports:
    """The modules a file imports, and the files of ``langbot`` and ``tests`` behind them."""

    def __init__(self, roots: dict[str, Path]) -> None:
        self.roots = roots
        self._cache: dict[Path, set[str]] = {}

    def file_of(self, module: str) -> Path | None:
        top = module.split(".", maxsplit=1)[0]
        root = self.roots.get(top)
        if root is None:
            return None
        base = root.joinpath(*module.split("."))
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
        return None

    def of(self, path: Path, module: str) -> set[str]:
        if path not in self._cache:
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"))
            except (SyntaxError, UnicodeDecodeError):
                tree = ast.Module(body=[], type_ignores=[])
            package = module if path.name == "__init__.py" else module.rpartition(".")[0]
            found: set[str] = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    found.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom):
                    parts = package.split(".")
                    if node.level:
                        parts = parts[: len(parts) - node.level + 1]
                        base = ".".join([*parts, *([node.module] if node.module else [])])
                    else:
                        base = node.module or ""
                    found.add(base)
                    found.update(f"{base}.{alias.name}" for alias in node.names)
            self._cache[path] = found
        return self._cache[path]

    def touches_sdk(self, path: Path, module: str, seen: set[Path]) -> bool:
        for imported in self.of(path, module):
            if imported.split(".")[0] == "langbot_plugin":
                return True
            parts = imported.split(".")
            for end in range(1, len(parts) + 1):
                name = ".".join(parts[:end])
                target = self.file_of(name)
                if target is not None and target not in seen:
                    seen.add(target)
                    if self.touches_sdk(target, name, seen):
                        return True
        return False


def _conftests(checkout: Path, test_file: Path) -> list[Path]:
    found: list[Path] = []
    folder = test_file.parent
    while folder != checkout and checkout in folder.parents:
        if (folder / "conftest.py").is_file():
            found.append(folder / "conftest.py")
        folder = folder.parent
    return found


def select_tests(checkout: Path, site_packages: Path) -> list[str]:
    """The checkout's test files (relative paths) that touch ``langbot_plugin``."""
    imports = _Imports({"langbot": site_packages, "tests": checkout})
    selected: list[str] = []
    for suite in SUITES:
        for test_file in sorted((checkout / suite).rglob("test_*.py")):
            seen: set[Path] = set()
            relative = test_file.relative_to(checkout)
            candidates = [test_file, *_conftests(checkout, test_file)]
            if any(
                imports.touches_sdk(
                    path, ".".join(path.relative_to(checkout).with_suffix("").parts), seen
                )
                for path in candidates
            ):
                selected.append(str(relative))
    return selected


# --------------------------------------------------------------------------- verdict


def outcomes(junit_xml: Path) -> dict[str, str]:
    """``test id -> passed | failed | error | skipped`` from a pytest JUnit report."""
    results: dict[str, str] = {}
    for case in ET.parse(junit_xml).getroot().iter("testcase"):
        test_id = f"{case.get('classname', '')}::{case.get('name', '')}"
        verdict = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                verdict = {"failure": "failed"}.get(child.tag, child.tag)
                break
        results[test_id] = verdict
    return results


def regressions(reference: dict[str, str], ours: dict[str, str]) -> list[str]:
    """Tests that pass with the reference and do not with ours."""
    return sorted(t for t, v in reference.items() if v == "passed" and ours.get(t) != "passed")


def _count(results: dict[str, str]) -> str:
    counts = {v: sum(1 for x in results.values() if x == v) for v in ("passed", "failed", "error")}
    return ", ".join(f"{n} {v}" for v, n in counts.items())


# --------------------------------------------------------------------------- running


def _run(*args: str | Path, cwd: Path | None = None) -> None:
    subprocess.run([str(a) for a in args], check=True, cwd=cwd)


def _prepare(venv: Path, version: str) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        _run(sys.executable, "-m", "venv", venv)
    _run(python, "-m", "pip", "install", "-q", f"langbot=={version}", *TEST_TOOLS)
    return python


def _pinned_sdk(python: Path) -> str:
    script = (
        "import importlib.metadata as m\n"
        "print(next(r for r in m.requires('langbot') if r.startswith('langbot-plugin')))"
    )
    done = subprocess.run([python, "-c", script], capture_output=True, text=True, check=True)
    return done.stdout.strip().replace(" ", "")


def _pytest(python: Path, checkout: Path, files: Iterable[str], report: Path, timeout: int) -> None:
    args = [
        python, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--continue-on-collection-errors",
        f"--timeout={timeout}", f"--junitxml={report}", *files,
    ]  # fmt: skip
    subprocess.run([str(a) for a in args], cwd=checkout, check=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run LangBot's own tests against this package.")
    parser.add_argument("checkout", nargs="?", default=os.environ.get("LANGBOT_SRC", ""))
    parser.add_argument("files", nargs="*", help="test files (default: the selection)")
    parser.add_argument("--langbot", default=os.environ.get("LANGBOT_VERSION", "4.11.2"))
    parser.add_argument("--venv", type=Path, default=REPO / ".langbot-tests" / "venv")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per test")
    parser.add_argument("--only", choices=("reference", "ours"))
    options = parser.parse_args(argv)
    if not options.checkout:
        print("langbot-tests: skipped (no LangBot checkout: pass one, or set LANGBOT_SRC)")
        return 0
    checkout = Path(options.checkout).resolve()
    if not (checkout / "tests").is_dir():
        print(f"langbot-tests: {checkout} has no tests/ folder", file=sys.stderr)
        return 2
    python = _prepare(options.venv, options.langbot)
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    files = options.files or select_tests(checkout, Path(site))
    print(f"langbot-tests: {len(files)} test files of {checkout}, langbot=={options.langbot}")
    results_dir = options.venv.parent / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    reports = {"reference": results_dir / "reference.xml", "ours": results_dir / "ours.xml"}
    if options.only != "ours":
        _run(python, "-m", "pip", "install", "-q", "--no-deps", _pinned_sdk(python))
        _pytest(python, checkout, files, reports["reference"], options.timeout)
    if options.only != "reference":
        _run(python, "-m", "pip", "install", "-q", "--no-deps", "-e", REPO)
        _pytest(python, checkout, files, reports["ours"], options.timeout)
    if options.only is not None:
        return 0
    reference, ours = outcomes(reports["reference"]), outcomes(reports["ours"])
    lost = regressions(reference, ours)
    print(f"reference: {_count(reference)}")
    print(f"ours:      {_count(ours)}")
    print(f"passing with the reference and not with ours: {len(lost)}")
    for test_id in lost:
        print(f"  {ours.get(test_id, 'missing')}: {test_id}")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
