"""Hot reload in ``lbp dev`` when the edit loads but could not serve: a component that
misses an abstract method, a plugin whose ``initialize`` raises. Each is one
``plugin.broken`` report naming the file and line, and the last good version keeps
answering. The quoted source line is the file as saved last."""

from __future__ import annotations

from pathlib import Path

import pytest

from langbot_plugin.dev import DevSession
from tests.dev.helpers import toolbox
from tests.dev.test_session import Seen

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

ABSTRACT_TOOL = """\
from typing import Any

from langbot_plugin.api.definition.components.tool.tool import Tool


class Base(Tool):
    pass


class Add(Base):
    async def run(self, params: dict[str, Any]) -> Any:
        return {"sum": 0}
"""

FAILING_MAIN = """\
from langbot_plugin.api.definition.plugin import BasePlugin


class Toolbox(BasePlugin):
    async def initialize(self) -> None:
        raise RuntimeError("the API key is missing")
"""


async def test_a_tool_without_call_is_one_line_and_the_last_version_serves(
    tmp_path: Path,
) -> None:
    plugin = toolbox(tmp_path)
    seen = Seen()
    session = DevSession(plugin)
    session.events.subscribe(seen)
    async with session as dev:
        await seen.wait("plugin.ready")
        (plugin / "components" / "tools" / "add.py").write_text(ABSTRACT_TOOL)
        broken = await seen.wait("plugin.broken")
        lines = broken.data["text"].splitlines()
        assert lines[1:] == [
            "  components/tools/add.py:10: Add does not define call, the abstract method "
            "every Tool must have",
            "      class Add(Base):",
        ], lines
        assert await dev.call_tool("add", {"a": 1, "b": 2}) == {"sum": 3}
        assert await dev.command("hello you") == ["hello, you!"]
    assert "Traceback" not in "\n".join(str(e.data.get("text")) for e in seen.events)


async def test_an_initialize_that_raises_falls_back_to_the_last_good_version(
    tmp_path: Path,
) -> None:
    plugin = toolbox(tmp_path)
    main = plugin / "main.py"
    good = main.read_text()
    seen = Seen()
    session = DevSession(plugin)
    session.events.subscribe(seen)
    async with session as dev:
        await seen.wait("plugin.ready")
        main.write_text(FAILING_MAIN)
        broken = await seen.wait("plugin.broken")
        assert broken.data["text"].splitlines()[1:] == [
            "  main.py:6: the plugin raised while it started: RuntimeError: the API key is missing",
            '      raise RuntimeError("the API key is missing")',
        ]
        await seen.wait("plugin.reloaded")  # the previous version, registered again
        assert await dev.command("hello again") == ["hello, again!"]

        main.write_text(good.replace("pass", "greeting = 'v2'"))
        await seen.wait("plugin.reloaded")
        assert await dev.command("hello v2") == ["hello, v2!"]
    retries = [e for e in seen.events if "retrying" in str(e.data.get("text"))]
    assert retries == []


async def test_the_quoted_source_line_is_the_file_as_saved_last(tmp_path: Path) -> None:
    plugin = toolbox(tmp_path)
    tool = plugin / "components" / "tools" / "add.py"
    good = tool.read_text()
    seen = Seen()
    session = DevSession(plugin)
    session.events.subscribe(seen)
    async with session:
        await seen.wait("plugin.ready")
        tool.write_text(good + "first = (\n")
        first = await seen.wait("plugin.broken")
        assert "      first = (" in first.data["text"].splitlines()
        tool.write_text(good + "second = [\n")
        second = await seen.wait("plugin.broken")
        assert "      second = [" in second.data["text"].splitlines()
        assert "first" not in second.data["text"]
