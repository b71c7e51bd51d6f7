"""The harness points a failing test at the plugin's own code: where a runner, a tool,
a command and a listener raised (the ``raiser`` plugin, all in ``components/helpers.py``
line 5), in memory and through a real ``lbp rt`` child."""

from __future__ import annotations

from pathlib import Path

import pytest

from langbot_plugin.rpc import InternalError
from langbot_plugin.testing import PluginHarness, message_received

pytestmark = pytest.mark.anyio

RAISER = Path(__file__).resolve().parents[1] / "fixtures" / "plugins" / "raiser"
INNERMOST = 'File "components/helpers.py", line 5, in divide'


def noted(exc: BaseException) -> str:
    return "\n".join(getattr(exc, "__notes__", []))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("process", [False, True], ids=["in-memory", "lbp-rt-child"])
async def test_each_failure_says_where_the_plugin_raised(process: bool, tmp_path: Path) -> None:
    async with PluginHarness(RAISER, process=process, workdir=tmp_path) as h:
        reply = await h.run_agent("hi")
        assert not reply.ok
        assert reply.error is not None
        assert reply.error["error"] == "ZeroDivisionError: division by zero"
        assert reply.traceback is not None
        assert 'File "components/runner.py", line 14, in run' in reply.traceback
        assert INNERMOST in reply.traceback
        assert "langbot_plugin" not in reply.traceback

        with pytest.raises(InternalError) as tool:
            await h.call_tool("ratio", {"a": 1, "b": 0})
        assert tool.value.details["file"] == "components/helpers.py"
        assert tool.value.details["line"] == 5
        assert 'File "components/tool.py", line 11, in call' in noted(tool.value)

        with pytest.raises(InternalError) as command:
            await h.command("split")
        assert 'File "components/command.py", line 15, in split' in noted(command.value)

        with pytest.raises(InternalError) as listener:
            await h.emit_event(message_received("count me"))
        assert 'File "components/listener.py", line 14, in on_message' in noted(listener.value)
        assert INNERMOST in noted(listener.value)
