"""A stand-in for an external agent harness (Claude Code, Codex, ...): it reads its task
on stdin, its tools from ``--mcp-config`` (an ``mcpServers`` file naming a streamable-HTTP
server), and prints what it
does as JSON lines on stdout, ending with its answer.

Its "reasoning" is deliberately simple, so the example stays deterministic: the first
word of the task names a LangBot tool, the rest is that tool's ``text`` argument. It
calls the tool through the ``langbot_call_tool`` MCP tool of the ``langbot_agent``
server, as a real harness would after its model chose to.
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def say(**line: Any) -> None:
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


def text_of(result: Any) -> str:
    return "".join(getattr(part, "text", "") for part in result.content)


async def main(task: str, server: dict[str, Any]) -> int:
    tool, _, rest = task.partition(" ")
    async with (
        httpx2.AsyncClient(headers=server.get("headers") or {}) as http,
        Client(streamable_http_client(server["url"], http_client=http), cache=None) as langbot,
    ):
        listed = {t.name for t in (await langbot.list_tools()).tools}
        if "langbot_call_tool" not in listed:
            say(event="answer", text="LangBot offers this run no tools.")
            return 0
        arguments = {"tool_name": tool, "parameters": {"text": rest}}
        say(event="tool_call", id="call-1", tool=tool, arguments=arguments["parameters"])
        result = await langbot.call_tool("langbot_call_tool", arguments)
        if result.is_error:
            say(event="tool_result", id="call-1", tool=tool, error=text_of(result))
            say(event="answer", text=f"I could not use {tool}: {text_of(result)}")
            return 0
        value = (result.structured_content or {}).get("result", text_of(result))
        say(event="tool_result", id="call-1", tool=tool, result=value)
        say(event="answer", text=f"{tool} says: {value}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--mcp-config", type=Path, required=True)
    config = json.loads(parser.parse_args().mcp_config.read_text(encoding="utf-8"))
    sys.exit(anyio.run(main, sys.stdin.read().strip(), config["mcpServers"]["langbot_agent"]))
