#!/usr/bin/env python3
"""Drive the real LangBot host as an operator would, over its HTTP API (for ``run.sh``).

Usage: ``drive.py API_URL STAGED_SERVER_FILE``. Steps: first user and login; the fake
model provider and model; two stdio MCP servers (one inline ``python3 -c`` program,
one file the host stages into the Box workspace from its host path); wait until the
host reports both connected with their tools; a pipeline on the LocalAgent runner with
the fake model; one message per server whose answer must come from a tool call that
ran inside the Box. Prints PASS/FAIL lines; exits 0 only when every check passed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from host_api import Host, check, failed, wait_for

API = sys.argv[1].rstrip("/")
STAGED = sys.argv[2]

INLINE_PROGRAM = """
import os, socket
from mcp.server.mcpserver import MCPServer
app = MCPServer("acceptance-inline")
@app.tool()
def add(a: int, b: int) -> str:
    "Add two integers."
    return f"sum={a + b} computed on {socket.gethostname()} in {os.getcwd()}"
app.run()
"""
SERVERS = {
    "inline-add": {"command": "python3", "args": ["-c", INLINE_PROGRAM], "env": {}},
    "staged-forecast": {"command": "python3", "args": [STAGED], "env": {}},
}
TOOLS = {"inline-add": "add", "staged-forecast": "forecast"}


def main() -> int:
    host = Host(API)
    model = host.fake_model()

    # Two stdio MCP servers, added the way the web UI adds them.
    for name, extra_args in SERVERS.items():
        created = host.call(
            "POST",
            "/api/v1/mcp/servers",
            {"name": name, "mode": "stdio", "enable": True, "extra_args": extra_args},
        )
        check(f"MCP server {name} created", "'uuid'", str(created.get("data")))

    def connected() -> dict[str, Any] | None:
        servers = host.call("GET", "/api/v1/mcp/servers").get("data", {}).get("servers", [])
        infos = {s["name"]: s.get("runtime_info") or {} for s in servers}
        if all(infos.get(n, {}).get("status") == "connected" for n in SERVERS):
            return infos
        return None

    infos = wait_for(240, connected)
    if infos is None:
        servers = host.call("GET", "/api/v1/mcp/servers").get("data", {}).get("servers", [])
        summary = {s["name"]: s.get("runtime_info") for s in servers}
        check("both MCP servers connected", "connected", json.dumps(summary)[:1500])
        return 1
    for name, tool in TOOLS.items():
        info = infos[name]
        names = [t["name"] for t in info.get("tools", [])]
        check(f"{name} connected in {info.get('box_session_id')}", tool, ",".join(names))

    # A pipeline on the LocalAgent runner, with the fake model.
    pipeline = host.pipeline("mcp-in-box", model)
    check(
        "a tool call to the inline server, answered in the Box",
        "TOOL RESULT: sum=5 computed on box in /workspace",
        host.run(pipeline, 'use add {"a": 2, "b": 3}'),
    )
    check(
        "a tool call to the staged server, run from its staged copy",
        "served from /workspace/.mcp/",
        host.run(pipeline, 'use forecast {"city": "Paris"}'),
    )
    return 1 if failed() else 0


if __name__ == "__main__":
    sys.exit(main())
