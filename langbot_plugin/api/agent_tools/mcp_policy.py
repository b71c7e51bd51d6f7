"""What an MCP bridge lets a harness do: the servers its config may name, and the tools
that act rather than read.

:class:`MCPBridgePolicy` (given to :class:`~.mcp_bridge.AgentRunMCPBridge`):
``allowed_servers`` (``None``: any) and ``dangerous_tools`` (``fnmatch`` patterns,
:data:`DANGEROUS_TOOLS` by default) with ``dangerous="audit"`` or ``"refuse"``; what
each does and how refusals are audited is ``docs/security.md``, "The MCP bridge's
policy".
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from langbot_plugin.api.agent_tools._tool_models import mcp_error_result
from langbot_plugin.api.agent_tools.mcp_protocol import MCPToolResolver
from langbot_plugin.rpc.errors import PermissionDeniedError

__all__ = [
    "DANGEROUS_TOOLS",
    "MCPBridgePolicy",
    "MCPServerNotAllowedError",
    "PolicyResolver",
    "note_refusal",
]

logger = logging.getLogger("langbot_plugin.api.agent_tools.policy")

#: The bridge's own tools that act rather than read.
DANGEROUS_TOOLS: frozenset[str] = frozenset(
    {
        "langbot_call_tool",
        "langbot_acquire_box",
        "langbot_bind_box",
        "langbot_import_box_attachments",
        "langbot_export_box_files",
    }
)


class MCPServerNotAllowedError(PermissionDeniedError):
    """A harness config names an MCP server outside the bridge's allowlist."""

    code = "mcp_server_not_allowed"


@dataclass(frozen=True)
class MCPBridgePolicy:
    """See the module docstring."""

    allowed_servers: frozenset[str] | None = None
    dangerous_tools: frozenset[str] = field(default=DANGEROUS_TOOLS)
    dangerous: Literal["audit", "refuse"] = "audit"

    def is_dangerous(self, tool: str) -> bool:
        return any(fnmatch.fnmatchcase(tool, pattern) for pattern in self.dangerous_tools)

    def refuses(self, tool: str) -> bool:
        return self.dangerous == "refuse" and self.is_dangerous(tool)

    def check_servers(self, names: Iterable[str], *, own: str) -> None:
        """Refuse server names outside ``allowed_servers`` (``own`` is always allowed)."""
        if self.allowed_servers is None:
            return
        refused = sorted(n for n in names if n != own and n not in self.allowed_servers)
        if refused:
            raise MCPServerNotAllowedError(
                f"MCP server(s) {', '.join(refused)} not in the bridge's allowlist "
                f"({', '.join(sorted(self.allowed_servers)) or 'empty'})",
                details={"servers": refused, "allowed": sorted(self.allowed_servers)},
            )

    def mark(self, tool: dict[str, Any]) -> dict[str, Any]:
        """A ``tools/list`` entry with the destructive hint when the tool is dangerous."""
        if not self.is_dangerous(str(tool.get("name", ""))):
            return tool
        annotations = dict(tool.get("annotations") or {})
        annotations["destructiveHint"] = True
        return {**tool, "annotations": annotations}


def note_refusal(api: object, action: str, resource: object, exc: PermissionDeniedError) -> None:
    """Keep ``exc`` in the run's audit (the SDK's local refusals), and log it."""
    binding: Any = getattr(api, "_binding", None)
    if binding is not None:
        binding.refusals.note(action, resource, exc.code, exc.message)
    logger.warning("MCP bridge refused %s %s: %s", action, resource, exc.message)


class PolicyResolver:
    """An MCP tool surface (``inner``) under a policy, for the run ``run_id`` of ``api``."""

    def __init__(
        self, inner: MCPToolResolver, policy: MCPBridgePolicy, *, api: object, run_id: str
    ) -> None:
        self.inner = inner
        self.policy = policy
        self.api = api
        self.run_id = run_id

    async def list_tools(self) -> list[dict[str, Any]]:
        policy = self.policy
        return [
            policy.mark(tool)
            for tool in await self.inner.list_tools()
            if not policy.refuses(str(tool.get("name", "")))
        ]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        policy = self.policy
        if policy.refuses(name):
            exc = PermissionDeniedError(
                f"the MCP bridge refuses the dangerous tool {name} for this run",
                details={"tool": name, "run_id": self.run_id},
            )
            note_refusal(self.api, name, name, exc)
            return mcp_error_result(exc.message, code=exc.code)
        if policy.is_dangerous(name):
            logger.info(
                "MCP bridge: run %s calls the dangerous tool %s",
                self.run_id,
                name,
                extra={"lbp_fields": {"run_id": self.run_id, "tool": name}},
            )
        return await self.inner.call_tool(name, arguments)
