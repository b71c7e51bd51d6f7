"""A stdio MCP server the host stages into the Box workspace from its own host path.

Added to the host as ``python3 <absolute path of this file>``: the host infers the
file's directory as the server's host path, copies it into the ``mcp-shared``
workspace (``/workspace/.mcp/<server uuid>/workspace``) and starts it there. The tool's
answer names the directory it runs in, so the pipeline reply proves where it ran.
"""

from __future__ import annotations

import os
import socket

from mcp.server.mcpserver import MCPServer

app = MCPServer("acceptance-forecast")


@app.tool()
def forecast(city: str) -> str:
    """The weather forecast of a city."""
    return f"forecast for {city}: sunny, 21C (served from {os.getcwd()} on {socket.gethostname()})"


if __name__ == "__main__":
    app.run()
