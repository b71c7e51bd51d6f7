"""LangBot's ``exec`` tool, written once (``langbot_plugin.host.sandbox_tools``): the
request it makes of the Box and the answer LangBot 4.11.2 gives, and the three places
that offer it (the local host's run Box, ``lbp dev --box``, the harness) using it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from langbot_plugin.dev.box import LocalBox
from langbot_plugin.host import sandbox_tools
from langbot_plugin.host.sandbox_tools import (
    EXEC_DESCRIPTION,
    EXEC_PARAMETERS,
    EXEC_TOOL,
    exec_answer,
    exec_spec,
)
from langbot_plugin.rpc.errors import InvalidParamsError
from langbot_plugin.testing.box import BoxSandbox
from tests.support.reference import run_json_script
from tests.support.released_host import SCRIPTS, need_released_host

#: The keys of LangBot 4.11.2's answer (``BoxService._serialize_result`` and the native
#: tool loader's ``_normalize_exec_result``), in its order.
KEYS = [
    "session_id",
    "backend",
    "status",
    "ok",
    "exit_code",
    "stdout",
    "stderr",
    "stdout_truncated",
    "stderr_truncated",
    "duration_ms",
    "preview",
    "truncated",
]


def result(**fields: Any) -> dict[str, Any]:
    base = {
        "session_id": "s",
        "backend_name": "nsjail",
        "status": "completed",
        "exit_code": 0,
        "stdout": "",
        "stderr": "",
        "duration_ms": 7,
        "stdout_truncated": False,
        "stderr_truncated": False,
    }
    return {**base, **fields}


def test_the_request_passes_what_langbot_passes_and_needs_a_command() -> None:
    parameters = {"command": "ls", "workdir": "/tmp", "timeout_sec": 5, "env": {"A": "1"}}
    spec = exec_spec({**parameters, "description": "list"}, "box-1", {"image": "img"})
    assert spec == {
        "image": "img",
        "cmd": "ls",
        "session_id": "box-1",
        "workdir": "/tmp",
        "timeout_sec": 5,
        "env": {"A": "1"},
    }
    assert exec_spec({"command": "ls"}, "box-1") == {"cmd": "ls", "session_id": "box-1"}
    for bad in ({}, {"command": ""}, {"command": "  "}, {"command": ["ls"]}):
        with pytest.raises(InvalidParamsError, match="non-empty 'command'"):
            exec_spec(bad, "box-1")


def test_a_short_answer_is_langbots() -> None:
    answer = exec_answer(result(stdout="42\n"))
    assert list(answer) == KEYS
    assert answer == {
        "session_id": "s",
        "backend": "nsjail",
        "status": "completed",
        "ok": True,
        "exit_code": 0,
        "stdout": "42\n",
        "stderr": "",
        "stdout_truncated": False,
        "stderr_truncated": False,
        "duration_ms": 7,
        "preview": "42\n",
        "truncated": False,
    }
    both = exec_answer(result(stdout="o", stderr="e", exit_code=3))
    assert (both["ok"], both["preview"]) == (False, "stdout:\no\n\nstderr:\ne")
    timed_out = exec_answer(result(status="timed_out", exit_code=None, stderr="late"))
    assert (timed_out["ok"], timed_out["preview"]) == (False, "late")


def test_long_output_keeps_its_head_and_tail_around_a_notice() -> None:
    text = "a" * 4000 + "b" * 6000
    answer = exec_answer(result(stdout=text))
    # 6039 characters left out: a notice of 39 leaves 3961, 60 % of them from the start.
    notice = "\n\n... [6039 characters truncated] ...\n\n"
    assert answer["stdout"] == "a" * 2376 + notice + "b" * 1585
    assert len(answer["stdout"]) == sandbox_tools.OUTPUT_LIMIT_CHARS
    assert (answer["stdout_truncated"], answer["truncated"]) == (True, True)
    assert answer["preview"] == answer["stdout"]
    # exactly at the limit nothing is cut; the Box's own cut is reported too
    kept = exec_answer(result(stdout="x" * 4000, stderr_truncated=True))
    assert (len(kept["stdout"]), kept["stdout_truncated"]) == (4000, False)
    assert (kept["stderr_truncated"], kept["truncated"]) == (True, True)


def test_every_place_that_offers_exec_offers_the_same_tool(tmp_path: Path) -> None:
    """``lbp dev --box`` and the harness describe the one tool (the local host's run Box
    serves it through ``RunBoxService.call_tool``, see tests/host/test_box_service.py)."""
    dev = LocalBox("nsjail", tmp_path).host_tools()[0]
    harness = BoxSandbox(client=None, backend="nsjail", session_id="s").tools()[0]  # type: ignore[arg-type]
    for tool in (dev, harness):
        assert (tool.name, tool.description, tool.parameters) == (
            EXEC_TOOL,
            EXEC_DESCRIPTION,
            EXEC_PARAMETERS,
        )


def test_the_answer_is_the_released_hosts_own(tmp_path: Path) -> None:
    """The released host computes the answer of the same Box results (its 4,000-character
    cut across the lengths where the notice's count gains a digit, the preview of one
    or both streams, a failed and a timed out run)."""
    python = need_released_host()
    lengths = [*range(3995, 4045), *range(9990, 10050), 99_990, 100_000, 100_050, 1_000_045]
    results = [
        result(stdout="".join(chr(97 + i % 26) for i in range(n)), stderr="e" * (n % 7))
        for n in lengths
    ]
    results += [
        result(stdout="42\n"),
        result(stdout="o", stderr="e", exit_code=3),
        result(status="timed_out", exit_code=None, stderr="late"),
        result(),
    ]
    for each in results:  # what the host's result model holds (not the Box's own flags)
        del each["stdout_truncated"], each["stderr_truncated"]
    script = SCRIPTS / "exec_answer.py"
    theirs = run_json_script(python, script, {"results": results}, tmp_path)["answers"]
    assert [exec_answer(each) for each in results] == theirs
