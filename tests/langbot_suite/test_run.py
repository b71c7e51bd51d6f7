"""The LangBot-suite runner's own parts: which test files it selects, how it judges a run.

The whole run (``make langbot-tests LANGBOT_SRC=...``) needs a LangBot checkout and the
released host from PyPI; without a checkout it says so and stops (tested here too).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.langbot_suite.run import main, outcomes, regressions, select_tests


def _write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_the_selection_follows_imports_through_host_modules_helpers_and_conftests(
    tmp_path: Path,
) -> None:
    checkout, site = tmp_path / "LangBot", tmp_path / "site"
    _write(site, "langbot/__init__.py", "")
    _write(site, "langbot/pkg/__init__.py", "")
    _write(site, "langbot/pkg/box.py", "from langbot_plugin.box.client import ActionRPCBoxClient\n")
    _write(site, "langbot/pkg/plain.py", "import json\n")
    _write(checkout, "tests/__init__.py", "")
    _write(checkout, "tests/factories/__init__.py", "")
    _write(checkout, "tests/factories/msg.py", "import langbot_plugin.api\n")
    _write(checkout, "tests/unit_tests/test_direct.py", "import langbot_plugin\n")
    _write(checkout, "tests/unit_tests/test_host.py", "from langbot.pkg import box\n")
    _write(checkout, "tests/unit_tests/test_helper.py", "from tests.factories import msg\n")
    _write(checkout, "tests/unit_tests/test_plain.py", "from langbot.pkg.plain import json\n")
    _write(checkout, "tests/unit_tests/agent/conftest.py", "import langbot_plugin.api\n")
    _write(checkout, "tests/unit_tests/agent/test_conf.py", "import os\n")
    _write(checkout, "tests/e2e/test_live.py", "import langbot_plugin\n")
    assert select_tests(checkout, site) == [
        "tests/unit_tests/agent/test_conf.py",
        "tests/unit_tests/test_direct.py",
        "tests/unit_tests/test_helper.py",
        "tests/unit_tests/test_host.py",
    ]


def _junit(path: Path, cases: dict[str, str]) -> Path:
    body = "".join(
        f'<testcase classname="tests.t" name="{name}">'
        + ("" if verdict == "passed" else f"<{verdict} message='x'/>")
        + "</testcase>"
        for name, verdict in cases.items()
    )
    path.write_text(f"<testsuites><testsuite>{body}</testsuite></testsuites>", encoding="utf-8")
    return path


def test_a_test_passing_with_the_reference_must_pass_with_ours(tmp_path: Path) -> None:
    reference = outcomes(
        _junit(tmp_path / "r.xml", {"a": "passed", "b": "passed", "c": "failure", "d": "skipped"})
    )
    ours = outcomes(_junit(tmp_path / "o.xml", {"a": "passed", "b": "error", "c": "failure"}))
    assert reference == {
        "tests.t::a": "passed",
        "tests.t::b": "passed",
        "tests.t::c": "failed",
        "tests.t::d": "skipped",
    }
    assert regressions(reference, ours) == ["tests.t::b"]  # c fails on both: not counted


def test_without_a_checkout_the_run_is_skipped(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("LANGBOT_SRC", raising=False)
    assert main([]) == 0
    assert "skipped" in capsys.readouterr().out
