"""Declaring the tools a runner exposes to external harnesses.

A tool is an ``async`` method marked with :func:`agent_tool`; the mark carries an
:class:`AgentToolSpec` (name, description, pydantic arguments model, read-only hint).
:func:`collect_agent_tools` finds the marked methods of an object and binds them.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = [
    "TOOL_SPEC_ATTRIBUTE",
    "AgentToolSpec",
    "BoundAgentTool",
    "agent_tool",
    "collect_agent_tools",
    "tool_spec_of",
]

#: Attribute a marked function carries (the reference SDK's name, kept for peers).
TOOL_SPEC_ATTRIBUTE = "__langbot_agent_tool__"

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class AgentToolSpec:
    """What a run-scoped tool looks like to an MCP client."""

    name: str
    description: str
    args_model: type[BaseModel]
    read_only: bool = False

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments (the args model's schema)."""
        return self.args_model.model_json_schema()

    def to_mcp_tool(self) -> dict[str, Any]:
        """The tool as an MCP ``tools/list`` entry (wire field names)."""
        tool: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema(),
        }
        if self.read_only:
            tool["annotations"] = {"readOnlyHint": True}
        return tool


@dataclass(frozen=True)
class BoundAgentTool:
    """A tool's spec with the bound method that serves it."""

    spec: AgentToolSpec
    handler: Callable[[BaseModel], Awaitable[Any]]


def agent_tool(
    *,
    name: str,
    description: str,
    args_model: type[BaseModel],
    read_only: bool = False,
) -> Callable[[F], F]:
    """Mark an ``async`` method as a tool external harnesses may call.

    The method takes one argument, an instance of ``args_model``, and returns any
    JSON-able value (pydantic models are dumped).
    """
    spec = AgentToolSpec(
        name=name, description=description, args_model=args_model, read_only=read_only
    )

    def mark(func: F) -> F:
        setattr(func, TOOL_SPEC_ATTRIBUTE, spec)
        return func

    return mark


def tool_spec_of(value: object) -> AgentToolSpec | None:
    """The spec a function or bound method was marked with, if any."""
    spec = getattr(value, TOOL_SPEC_ATTRIBUTE, None)
    if spec is None:
        spec = getattr(getattr(value, "__func__", None), TOOL_SPEC_ATTRIBUTE, None)
    return spec if isinstance(spec, AgentToolSpec) else None


def collect_agent_tools(obj: object) -> dict[str, BoundAgentTool]:
    """The marked methods of ``obj`` by tool name.

    Raises ``TypeError`` for a marked method that is not ``async`` and ``ValueError``
    when two methods claim the same tool name.
    """
    tools: dict[str, BoundAgentTool] = {}
    for attribute in dir(obj):
        # Look at the attribute without running it: properties stay untouched.
        spec = tool_spec_of(inspect.getattr_static(obj, attribute, None))
        if spec is None:
            continue
        member = getattr(obj, attribute)
        if not callable(member):
            continue
        if not inspect.iscoroutinefunction(member):
            raise TypeError(f"agent tool {spec.name!r} must be an async method")
        if spec.name in tools:
            raise ValueError(f"duplicate agent tool name: {spec.name!r}")
        tools[spec.name] = BoundAgentTool(spec=spec, handler=member)
    return tools
