"""An official runner, unmodified, gives its harness the run's tools through the bridge.

The Claude Code runner of langbot-app/langbot-agent-runner is loaded from its mirror
and run against a real run API. Its harness is a stand-in for the ``claude`` CLI: it
reads the ``--mcp-config`` the runner wrote, spawns the LangBot MCP server listed there
(our stdio relay) with the ``mcp`` package's stdio client, calls ``langbot_call_tool``
and prints the result as Claude's stream-json. The call reaches the host with the
run's id: runner -> AgentRunMCPAccess -> bridge -> stdio relay -> harness -> back.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langbot_plugin.api.entities.builtin.agent_runner import AgentRunResult
from tests.api.agent_tools.helpers import running
from tests.api.helpers import connected
from tests.api.runs import run_context
from tests.support.official import RUNNERS, materialize, need

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

FAKE_CLAUDE = """\
import json, sys
import anyio

async def main() -> None:
    args = sys.argv[1:]
    config = json.loads(open(args[args.index("--mcp-config") + 1]).read())
    session_id = args[args.index("--session-id") + 1]
    prompt = sys.stdin.read()
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    server = config["mcpServers"]["langbot_agent"]
    params = StdioServerParameters(
        command=server["command"], args=server["args"], env=server["env"]
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        names = sorted(tool.name for tool in (await client.list_tools()).tools)
        result = await client.call_tool(
            "langbot_call_tool", {"tool_name": "t", "parameters": {"prompt": prompt}}
        )
    content = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)
    text = json.dumps({"tools": names, "result": content})
    event = {"type": "assistant", "session_id": session_id, "message": {"content": text}}
    print(json.dumps(event), flush=True)

anyio.run(main)
"""


@pytest.fixture
def claude_code_runner(tmp_path: Path) -> Iterator[type[Any]]:
    root = materialize(need(RUNNERS), "claude-code-agent", tmp_path)
    before = set(sys.modules)
    sys.path.insert(0, str(root))
    try:
        module = importlib.import_module("pkg.native_cli")
        yield module.NativeClaudeCodeRunner
    finally:
        sys.path.remove(str(root))
        for name in set(sys.modules) - before:
            if name == "pkg" or name.startswith("pkg."):
                del sys.modules[name]


async def test_claude_code_runner_gives_its_harness_the_runs_tools(
    claude_code_runner: type[Any], tmp_path: Path
) -> None:
    harness = tmp_path / "claude"
    harness.write_text(f"#!{sys.executable}\n{FAKE_CLAUDE}")
    harness.chmod(0o755)
    ctx = run_context(apis=["history_page"]).model_copy(
        update={
            "config": {
                "command": str(harness),
                "workspace": str(tmp_path),
                "streaming": False,
                "timeout": 120,
            }
        }
    )
    async with running(ctx) as run, connected(run.peer) as session:
        runner = claude_code_runner()
        runner.bind_runtime(plugin_runtime_handler=session, plugin_config={})
        results: list[AgentRunResult] = [result async for result in runner.run(ctx)]
    kinds = [result.type for result in results]
    assert kinds[-1] == "run.completed", results[-1]
    completed = next(r for r in results if r.type == "message.completed")
    answer = completed.data["message"]["content"]
    assert '"langbot_call_tool"' in answer
    assert '"result": {"echo": {"prompt": "hi"}}' in answer
    assert run.peer.last("call_tool") == {
        "run_id": "run-1",
        "tool_name": "t",
        "parameters": {"prompt": "hi"},
    }
