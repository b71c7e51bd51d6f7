"""A stdio MCP server for the relay tests, written with the ``mcp`` package's server API.

It runs inside the sandbox (Docker or nsjail) with the ``mcp`` package on
``PYTHONPATH`` (see ``tests/support/mcp_vendor.py``). Tools:

* ``echo(text)``: returns ``text`` unchanged (messages of any size);
* ``blob(size, seed)``: returns ``size`` characters derived from ``seed`` (big replies
  the client can check without sending them);
* ``digest(text)``: returns the SHA-256 of ``text`` (big requests checked by the server).
"""

from __future__ import annotations

import hashlib

from mcp.server.mcpserver import MCPServer

app = MCPServer("lbp-relay-echo")


@app.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@app.tool()
def blob(size: int, seed: str = "x") -> str:
    """Return ``size`` characters made from ``seed``."""
    return pattern(size, seed)


@app.tool()
def digest(text: str) -> str:
    """Return the SHA-256 hex digest of the text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def pattern(size: int, seed: str) -> str:
    unit = hashlib.sha256(seed.encode("utf-8")).hexdigest()
    return (unit * (size // len(unit) + 1))[:size]


if __name__ == "__main__":
    app.run()
