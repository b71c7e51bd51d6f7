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
import time
import urllib.error
import urllib.request
from typing import Any

API = sys.argv[1].rstrip("/")
STAGED = sys.argv[2]
USER = {"user": "admin@example.com", "password": "Passw0rd!Passw0rd"}

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
failed = False


def log(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def check(name: str, expected: str, actual: str) -> None:
    global failed
    if expected in actual:
        log(f"PASS {name}: {actual[:400]}")
    else:
        failed = True
        log(f"FAIL {name}: expected {expected!r} in {actual[:600]!r}")


def call(method: str, path: str, body: Any = None, token: str | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{API}{path}", data=data, method=method)
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=180) as response:
            return json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return {"http_error": exc.code, "body": exc.read().decode(errors="replace")[:2000]}


def wait_for(seconds: float, probe: Any) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        value = probe()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(1)


def main() -> int:
    call("POST", "/api/v1/user/init", USER)
    token = call("POST", "/api/v1/user/auth", USER)["data"]["token"]

    def api(method: str, path: str, body: Any = None) -> Any:
        return call(method, path, body, token)

    # The fake model.
    provider = api(
        "POST",
        "/api/v1/provider/providers",
        {
            "name": "fake",
            "requester": "openai-chat-completions",
            "base_url": "http://127.0.0.1:18081/v1",
            "api_keys": ["sk-fake"],
        },
    )["data"]["uuid"]
    model = api(
        "POST",
        "/api/v1/provider/models/llm",
        {
            "name": "fake-model",
            "provider_uuid": provider,
            "abilities": ["func_call"],
            "extra_args": {},
        },
    )["data"]["uuid"]

    # Two stdio MCP servers, added the way the web UI adds them.
    for name, extra_args in SERVERS.items():
        created = api(
            "POST",
            "/api/v1/mcp/servers",
            {"name": name, "mode": "stdio", "enable": True, "extra_args": extra_args},
        )
        check(f"MCP server {name} created", "'uuid'", str(created.get("data")))

    def connected() -> dict[str, Any] | None:
        servers = api("GET", "/api/v1/mcp/servers").get("data", {}).get("servers", [])
        infos = {s["name"]: s.get("runtime_info") or {} for s in servers}
        if all(infos.get(n, {}).get("status") == "connected" for n in SERVERS):
            return infos
        return None

    infos = wait_for(240, connected)
    if infos is None:
        servers = api("GET", "/api/v1/mcp/servers").get("data", {}).get("servers", [])
        summary = {s["name"]: s.get("runtime_info") for s in servers}
        check("both MCP servers connected", "connected", json.dumps(summary)[:1500])
        return 1
    for name, tool in TOOLS.items():
        info = infos[name]
        names = [t["name"] for t in info.get("tools", [])]
        check(f"{name} connected in {info.get('box_session_id')}", tool, ",".join(names))

    # A pipeline on the LocalAgent runner, with the fake model.
    pipeline = api("POST", "/api/v1/pipelines", {"name": "mcp-in-box", "description": ""})["data"][
        "uuid"
    ]
    config = api("GET", f"/api/v1/pipelines/{pipeline}")["data"]["pipeline"]["config"]
    runner_id = config["ai"]["runner"]["id"]
    log(f"pipeline {pipeline} runner {runner_id}")
    config["ai"]["runner_config"].setdefault(runner_id, {})["model"] = {
        "primary": model,
        "fallbacks": [],
    }
    updated = api("PUT", f"/api/v1/pipelines/{pipeline}", {"config": config})
    check("pipeline uses the fake model", "0", str(updated.get("code")))

    def run(message: str) -> str:
        reply = api("POST", f"/api/v1/pipelines/{pipeline}/run", {"message": message})
        data = reply.get("data") or {}
        return f"{data.get('status')} | {data.get('reply', reply)}"

    check(
        "a tool call to the inline server, answered in the Box",
        "TOOL RESULT: sum=5 computed on box in /workspace",
        run('use add {"a": 2, "b": 3}'),
    )
    check(
        "a tool call to the staged server, run from its staged copy",
        "served from /workspace/.mcp/",
        run('use forecast {"city": "Paris"}'),
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
