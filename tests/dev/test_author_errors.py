"""A plugin's mistake points at the plugin's own code: a runner, a tool, a command and a
listener that raise each show the author's file and line in ``lbp dev``'s terminal and
``--json``, with no SDK frame in the way.

The ``raiser`` plugin's four components all fail in ``components/helpers.py`` line 5,
called from their own file. Real processes: ``lbp dev`` starts the runtime and
``lbp run`` (the worker), whose error crosses the wire to the host.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli.helpers import lbp

pytestmark = pytest.mark.timeout(180)

RAISER = Path(__file__).resolve().parents[1] / "fixtures" / "plugins" / "raiser"
INNERMOST = 'File "components/helpers.py", line 5, in divide'
LINES = ["hi", "!split", '/tool ratio {"a": 1, "b": 0}', "/event PersonNormalMessageReceived {}"]
CALLERS = {
    "runner": 'File "components/runner.py", line 14, in run',
    "command": 'File "components/command.py", line 15, in split',
    "tool": 'File "components/tool.py", line 11, in call',
    "listener": 'File "components/listener.py", line 14, in on_message',
}


def raiser(into: Path) -> Path:
    target = into / "raiser"
    shutil.copytree(RAISER, target, ignore=shutil.ignore_patterns("__pycache__", ".lbp-dev"))
    return target


def messages() -> list[str]:
    args: list[str] = []
    for line in LINES:
        args += ["-m", line]
    return args


def test_the_terminal_shows_where_each_component_raised(tmp_path: Path) -> None:
    done = lbp("dev", *messages(), cwd=raiser(tmp_path))
    assert done.code == 1, done.err
    err = done.err
    for kind, caller in CALLERS.items():
        assert caller in err, (kind, err)
    assert err.count(INNERMOST) == 4, err
    assert err.count("return a / b  # RAISES HERE") == 4, err  # the source line itself
    assert "✗ tool ratio raised at components/helpers.py:5: ZeroDivisionError" in err
    assert "✗ command split raised at components/helpers.py:5" in err
    assert "✗ listener PersonNormalMessageReceived raised at components/helpers.py:5" in err
    assert "✗ run failed: runner.exception: ZeroDivisionError: division by zero" in err
    assert "langbot_plugin/" not in err  # no SDK frame, no SDK traceback logged
    # each failure is said once, by the view: the banner is the only "lbp dev:" line
    assert [line for line in err.splitlines() if line.startswith("lbp dev: ")] == [
        err.splitlines()[0]
    ], err
    assert "event PersonNormalMessageReceived failed in a listener" in err


def test_json_carries_the_file_line_and_frames(tmp_path: Path) -> None:
    done = lbp("dev", "--json", *messages(), cwd=raiser(tmp_path))
    assert done.code == 1, done.err
    events = [json.loads(line) for line in done.out.splitlines()]
    ended = next(e for e in events if e["kind"] == "run.ended")
    error = ended["data"]["error"]
    assert error["code"] == "runner.exception"
    assert error["error"] == "ZeroDivisionError: division by zero"  # the host's form, unchanged
    assert (error["details"]["file"], error["details"]["line"]) == ("components/helpers.py", 5)
    assert CALLERS["runner"] in error["details"]["traceback"]
    failures = {e["data"]["kind"]: e["data"] for e in events if e["kind"] == "call.failed"}
    assert sorted(failures) == ["command", "listener", "tool"]
    for kind, failure in failures.items():
        assert failure["where"] == "components/helpers.py:5", failure
        assert CALLERS[kind] in failure["traceback"]
        assert INNERMOST in failure["traceback"]
        assert failure["error"] == "ZeroDivisionError: division by zero"
