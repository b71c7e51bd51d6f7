"""Tool declarations, neutral MCP server configs, tunnels and config merging."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from langbot_plugin.api.agent_tools import (
    LANGBOT_AGENT_MCP_SERVER_NAME,
    AgentMCPServerConfig,
    AgentToolSpec,
    agent_tool,
    collect_agent_tools,
    merge_mcp_server_config,
)
from langbot_plugin.api.agent_tools.mcp_config import (
    reverse_tunnel_for_endpoint,
    reverse_tunnel_for_mcp_server,
)


class Args(BaseModel):
    text: str


class Toolbox:
    @agent_tool(name="shout", description="Upper-case", args_model=Args, read_only=True)
    async def shout(self, args: Args) -> str:
        return args.text.upper()

    @property
    def exploding(self) -> str:
        raise RuntimeError("properties are not touched while collecting")


def test_agent_tool_marks_and_collects_async_methods() -> None:
    tools = collect_agent_tools(Toolbox())
    assert list(tools) == ["shout"]
    spec = tools["shout"].spec
    assert spec == AgentToolSpec("shout", "Upper-case", Args, read_only=True)
    assert spec.to_mcp_tool() == {
        "name": "shout",
        "description": "Upper-case",
        "inputSchema": Args.model_json_schema(),
        "annotations": {"readOnlyHint": True},
    }


def test_collecting_refuses_sync_tools_and_duplicate_names() -> None:
    class Sync:
        @agent_tool(name="x", description="", args_model=Args)
        def x(self, args: Args) -> None: ...

    class Twice:
        @agent_tool(name="x", description="", args_model=Args)
        async def a(self, args: Args) -> None: ...

        @agent_tool(name="x", description="", args_model=Args)
        async def b(self, args: Args) -> None: ...

    with pytest.raises(TypeError, match="async"):
        collect_agent_tools(Sync())
    with pytest.raises(ValueError, match="duplicate"):
        collect_agent_tools(Twice())


def test_server_configs_round_trip() -> None:
    http = AgentMCPServerConfig.http(name="lb", url="http://127.0.0.1:8765/mcp", headers={"A": 1})  # type: ignore[dict-item]
    assert http.to_dict() == {
        "name": "lb",
        "transport": "http",
        "url": "http://127.0.0.1:8765/mcp",
        "headers": {"A": "1"},
    }
    assert http.to_dict(include_type=True)["type"] == "http"
    assert AgentMCPServerConfig.from_dict(http.to_dict(include_type=True)) == http
    stdio = AgentMCPServerConfig.stdio(
        name="lb", command="python", args=["-m", "x"], env={"K": "v"}
    )
    assert AgentMCPServerConfig.from_dict(stdio.to_dict()) == stdio
    assert AgentMCPServerConfig.from_dict({"name": "n", "command": "c"}).transport == "stdio"
    assert AgentMCPServerConfig.from_dict({"name": "n", "url": "http://h"}).transport == "http"


def test_reverse_tunnels_forward_the_same_port() -> None:
    tunnel = reverse_tunnel_for_endpoint("http://127.0.0.1:8765/mcp")
    assert tunnel.spec == "127.0.0.1:8765:127.0.0.1:8765"
    assert tunnel.ssh_args() == ["-R", "127.0.0.1:8765:127.0.0.1:8765"]
    with pytest.raises(ValueError, match="port"):
        reverse_tunnel_for_endpoint("http://example.com/mcp")
    with pytest.raises(ValueError, match="URL"):
        reverse_tunnel_for_mcp_server(AgentMCPServerConfig.stdio(name="s", command="c"))


def test_merge_adds_the_langbot_server() -> None:
    merged = merge_mcp_server_config(
        {"mcp_servers": {"other": {"command": "o"}}, "theme": "dark"}, {"command": "lb"}
    )
    assert merged == {
        "theme": "dark",
        "mcpServers": {"other": {"command": "o"}, LANGBOT_AGENT_MCP_SERVER_NAME: {"command": "lb"}},
    }
    with pytest.raises(ValueError, match="object"):
        merge_mcp_server_config({"mcpServers": ["x"]}, {})


def test_importing_the_agent_tools_does_not_import_mcp_or_servers() -> None:
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "import langbot_plugin.api.agent_tools\n"
        "import langbot_plugin.api.agent_tools.asset_gateway\n"
        "import langbot_plugin.api.agent_tools.daemon\n"
        "import langbot_plugin.api.agent_tools.mcp_stdio\n"
        "heavy = {'mcp', 'mcp_types', 'uvicorn', 'starlette', 'httpx2', 'websockets'}\n"
        "print(sorted(heavy & {name.split('.')[0] for name in sys.modules}))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
