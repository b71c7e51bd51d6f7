"""An AgentRunner that hands each run to an external agent process.

Harnesses such as Claude Code or Codex run as their own processes and take their
tools from MCP servers. For each run this runner starts
:class:`~langbot_plugin.api.agent_tools.AgentRunMCPBridge`, a per-run MCP server on
loopback guarded by a run token, whose tools (``langbot_call_tool``,
``langbot_history_page``...) go through the run's API with the run's grants. It
writes an ``mcpServers`` config naming that bridge (streamable HTTP with the token in
a header; ``bridge.merged_mcp_config()`` gives a stdio relay for harnesses that only
spawn stdio servers), starts the agent
(``external_agent.py`` in this plugin, standing in for a real harness) with the
config and the user's message, and turns the JSON lines the agent prints into
results: ``tool.call.started`` / ``tool.call.completed`` for each tool it used, and
``run.completed`` with its answer. The bridge and the process end with the run.
"""

import json
import subprocess
import sys
import tempfile
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream

from langbot_plugin.api.agent_tools import AgentRunMCPBridge, merge_mcp_server_config
from langbot_plugin.api.definition.components.agent_runner.runner import AgentRunner
from langbot_plugin.api.entities.builtin.agent_runner import AgentRunContext, AgentRunResult
from langbot_plugin.api.entities.builtin.provider.message import Message

AGENT = Path(__file__).resolve().parents[2] / "external_agent.py"


def result_of(run_id: str, line: dict[str, Any]) -> AgentRunResult | None:
    event = line.get("event")
    if event == "tool_call":
        return AgentRunResult.tool_call_started(
            run_id, str(line["id"]), str(line["tool"]), dict(line.get("arguments") or {})
        )
    if event == "tool_result":
        return AgentRunResult.tool_call_completed(
            run_id,
            str(line["id"]),
            str(line["tool"]),
            result={"content": line.get("result")},
            error=line.get("error"),
        )
    return None


async def next_chunk(stream: ByteReceiveStream, deadline: float) -> bytes | None:
    """The next output of the agent, ``b""`` at its end, ``None`` past the deadline.
    (The wait is bounded here, not around the runner's ``yield``: a cancel scope must
    not stay open across a generator's yield.)"""
    with anyio.move_on_after(max(deadline - anyio.current_time(), 0.0)):
        try:
            return await stream.receive()
        except anyio.EndOfStream:
            return b""
    return None


class Delegate(AgentRunner):
    async def run(self, ctx: AgentRunContext) -> AsyncGenerator[AgentRunResult]:
        api = self.get_run_api(ctx)
        timeout = float(ctx.config.get("agent_timeout") or 60)
        answer: str | None = None
        with tempfile.TemporaryDirectory(prefix="mcp-agent-") as scratch:
            async with AgentRunMCPBridge.from_run_api(api, ctx) as bridge:
                config = Path(scratch) / "mcp.json"
                servers = merge_mcp_server_config(None, bridge.http_mcp_server_config())
                config.write_text(json.dumps(servers), encoding="utf-8")
                command = [sys.executable, str(AGENT), "--mcp-config", str(config)]
                process = await anyio.open_process(
                    command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None
                )
                async with process:
                    assert process.stdin is not None
                    assert process.stdout is not None
                    await process.stdin.send(ctx.input.to_text().encode())
                    await process.stdin.aclose()
                    deadline = anyio.current_time() + timeout
                    buffered = b""
                    while (chunk := await next_chunk(process.stdout, deadline)) is not None:
                        if not chunk:
                            break
                        *lines, buffered = (buffered + chunk).split(b"\n")
                        for raw in lines:
                            line = json.loads(raw)
                            if line.get("event") == "answer":
                                answer = str(line.get("text") or "")
                            result = result_of(ctx.run_id, line)
                            if result is not None:
                                yield result
                    if chunk is None:
                        process.kill()
                        yield AgentRunResult.run_failed(
                            ctx.run_id, f"the agent took over {timeout:g} s", "agent.timeout"
                        )
                        return
                    await process.wait()
        if process.returncode != 0 or answer is None:
            code = process.returncode
            yield AgentRunResult.run_failed(
                ctx.run_id, f"the agent exited {code} without an answer", "agent.failed"
            )
            return
        yield AgentRunResult.run_completed(ctx.run_id, Message(role="assistant", content=answer))
