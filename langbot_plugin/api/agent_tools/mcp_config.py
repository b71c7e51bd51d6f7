"""A neutral description of an MCP server, and SSH reverse tunnels to reach one.

Runner plugins turn :class:`AgentMCPServerConfig` into whatever their harness reads
(an ACP ``mcpServers`` entry, a Claude Code ``--mcp-config`` file, a Codex TOML
table) without depending on how the server behind it was started.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AgentMCPReverseTunnel",
    "AgentMCPServerConfig",
    "reverse_tunnel_for_endpoint",
    "reverse_tunnel_for_mcp_server",
]


def _strings(mapping: Mapping[Any, Any] | None) -> dict[str, str]:
    return {str(key): str(value) for key, value in dict(mapping or {}).items()}


@dataclass(frozen=True)
class AgentMCPServerConfig:
    """How to reach one MCP server: ``stdio`` (a command to spawn) or ``http``
    (a streamable-HTTP URL with headers)."""

    name: str
    transport: str
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict[str, str])
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict[str, str])

    @classmethod
    def stdio(
        cls,
        *,
        name: str,
        command: str,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
    ) -> AgentMCPServerConfig:
        """A server the harness spawns and talks to over stdin/stdout."""
        return cls(
            name=name,
            transport="stdio",
            command=command,
            args=tuple(str(arg) for arg in args),
            env=_strings(env),
        )

    @classmethod
    def http(
        cls,
        *,
        name: str,
        url: str,
        headers: Mapping[str, str] | None = None,
        transport: str = "http",
    ) -> AgentMCPServerConfig:
        """A server the harness reaches at ``url`` (streamable HTTP)."""
        return cls(name=name, transport=transport, url=url, headers=_strings(headers))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AgentMCPServerConfig:
        """Read the shape :meth:`to_dict` writes (``type`` is accepted for ``transport``;
        without either, a ``url`` means ``http`` and anything else ``stdio``)."""
        transport = str(data.get("transport") or data.get("type") or "").strip()
        if not transport:
            transport = "http" if data.get("url") else "stdio"
        return cls(
            name=str(data.get("name") or ""),
            transport=transport,
            url=str(data.get("url") or ""),
            headers=_strings(data.get("headers")),
            command=str(data.get("command") or ""),
            args=tuple(str(arg) for arg in data.get("args") or ()),
            env=_strings(data.get("env")),
        )

    def to_dict(self, *, include_type: bool = False) -> dict[str, Any]:
        """``name`` and ``transport`` (and ``type`` with ``include_type``) plus the
        non-empty fields."""
        data: dict[str, Any] = {"name": self.name, "transport": self.transport}
        if include_type:
            data["type"] = self.transport
        if self.url:
            data["url"] = self.url
        if self.headers:
            data["headers"] = dict(self.headers)
        if self.command:
            data["command"] = self.command
        if self.args:
            data["args"] = list(self.args)
        if self.env:
            data["env"] = dict(self.env)
        return data


@dataclass(frozen=True)
class AgentMCPReverseTunnel:
    """An ``ssh -R`` forward that makes a local MCP endpoint reachable on a remote host
    at the same port."""

    remote_host: str
    remote_port: int
    local_host: str
    local_port: int

    @property
    def spec(self) -> str:
        """``remote_host:remote_port:local_host:local_port``."""
        return f"{self.remote_host}:{self.remote_port}:{self.local_host}:{self.local_port}"

    def ssh_args(self) -> list[str]:
        """The ``ssh`` arguments that open the tunnel."""
        return ["-R", self.spec]


def reverse_tunnel_for_endpoint(
    endpoint: str, *, remote_host: str = "127.0.0.1", local_host: str = "127.0.0.1"
) -> AgentMCPReverseTunnel:
    """The tunnel for an ``http://host:port/...`` endpoint (same port on both ends)."""
    port = urllib.parse.urlparse(str(endpoint)).port
    if not port:
        raise ValueError(f"MCP endpoint has no port: {endpoint!r}")
    return AgentMCPReverseTunnel(
        remote_host=remote_host, remote_port=port, local_host=local_host, local_port=port
    )


def reverse_tunnel_for_mcp_server(
    server: AgentMCPServerConfig,
    *,
    remote_host: str = "127.0.0.1",
    local_host: str = "127.0.0.1",
) -> AgentMCPReverseTunnel:
    """The tunnel for an HTTP server config."""
    if not server.url:
        raise ValueError(f"MCP server {server.name!r} has no URL")
    return reverse_tunnel_for_endpoint(server.url, remote_host=remote_host, local_host=local_host)
