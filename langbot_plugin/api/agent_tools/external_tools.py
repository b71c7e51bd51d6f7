"""The LangBot tools a run exposes to an external harness (Claude Code, Codex, an ACP
agent, a Dify workflow, ...), each backed by the run's :class:`AgentRunAPIProxy`.

========================== ===================================================
MCP tool                   listed when
========================== ===================================================
langbot_list_assets        always
langbot_get_current_event  always
langbot_history_page       the run may use the ``history_page`` API
langbot_retrieve_knowledge some granted knowledge base allows ``retrieve``
langbot_get_tool_detail    some granted tool allows ``detail``
langbot_call_tool          some granted tool allows ``call``
langbot_*_box* (six)       the run may use the ``box`` API
langbot_reply_files        ``box``, and the ``event_reply`` tool allows ``call``
========================== ===================================================

A tool that is not listed cannot be called either. Every call goes through the run
API proxy, so it is checked against the same grants (and refused with the same
codes) as ``api.call_tool`` in the runner itself. Subclasses may add tools with
:func:`~langbot_plugin.api.agent_tools.decorators.agent_tool`; those are always listed.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from pydantic import ValidationError

from langbot_plugin.api.agent_tools._box_tools import (
    BindBoxArgs,
    BoxAcquireRequest,
    BoxToolsMixin,
    ExportBoxArgs,
    ImportBoxArgs,
    ReplyFilesArgs,
)
from langbot_plugin.api.agent_tools._tool_models import (
    ASSET_TYPES,
    AssetType,
    CallToolArgs,
    EmptyArgs,
    GetToolDetailArgs,
    HistoryPageArgs,
    ListAssetsArgs,
    RetrieveKnowledgeArgs,
    jsonable,
    mcp_error_result,
    mcp_result,
    with_run_token,
)
from langbot_plugin.api.agent_tools.decorators import (
    AgentToolSpec,
    agent_tool,
    collect_agent_tools,
)
from langbot_plugin.api.entities.builtin.agent_runner.context import AgentRunContext
from langbot_plugin.api.entities.builtin.agent_runner.errors import AgentAPIException
from langbot_plugin.api.entities.builtin.agent_runner.operations import effective_operations
from langbot_plugin.api.entities.builtin.runner.context import RunnerContext
from langbot_plugin.api.proxies.agent_run import AgentRunAPIProxy
from langbot_plugin.api.proxies.runner.api import RunnerAPIProxy
from langbot_plugin.protocol.host_api import run_context
from langbot_plugin.protocol.run_needs import api_flag

__all__ = [
    "BUILTIN_TOOL_NAMES",
    "AgentRunAPIProxy",
    "AgentRunContext",
    "AgentRunExternalTools",
    "AgentToolSpec",
    "BindBoxArgs",
    "BoxAcquireRequest",
    "CallToolArgs",
    "EmptyArgs",
    "ExportBoxArgs",
    "GetToolDetailArgs",
    "HistoryPageArgs",
    "ImportBoxArgs",
    "ListAssetsArgs",
    "ReplyFilesArgs",
    "RetrieveKnowledgeArgs",
    "RunnerAPIProxy",
    "RunnerContext",
    "agent_tool",
    "collect_agent_tools",
    "mcp_error_result",
    "mcp_result",
]

logger = logging.getLogger(__name__)

#: The ``tool_type`` of the host's platform actions, listed apart from ordinary tools.
PLATFORM_TOOL_TYPE = "platform"


class _Grants(Protocol):
    def granted_operations(self, kind: str, resource_id: str) -> frozenset[str]: ...

    def api_available(self, name: str) -> bool: ...


class AgentRunExternalTools(BoxToolsMixin):
    """The run-scoped LangBot tools of one run, ready to serve over MCP."""

    def __init__(self, api: AgentRunAPIProxy, ctx: AgentRunContext) -> None:
        self.api = api
        self.ctx = ctx
        self._tools = collect_agent_tools(self)

    # ------------------------------------------------------------------ catalogue

    @classmethod
    def all_mcp_tools(cls, *, include_run_token: bool = False) -> list[dict[str, Any]]:
        """Every tool of the class, whatever a run was granted (what a shared gateway
        shows a caller it does not know yet)."""
        listed = [bound.spec.to_mcp_tool() for bound in collect_agent_tools(cls).values()]
        return [with_run_token(tool) for tool in listed] if include_run_token else listed

    def _operations(self, kind: str, resource_id: str, operations: list[str]) -> frozenset[str]:
        """The run API's frozen grants when it is the SDK's proxy; else (a stand-in API
        of a test) what the context grants, as the reference reads it."""
        grants: _Grants | None = self.api if hasattr(self.api, "granted_operations") else None
        found = grants.granted_operations(kind, resource_id) if grants is not None else None
        if isinstance(found, frozenset):
            return found
        return effective_operations(kind, operations)

    def _history_available(self) -> bool:
        flag = api_flag(run_context.HISTORY_PAGE)
        grants: _Grants | None = self.api if hasattr(self.api, "api_available") else None
        found = grants.api_available(flag) if grants is not None else None
        if isinstance(found, bool):
            return found
        return self.ctx.context.available_apis.allows(flag)

    def _kb_operations(self) -> list[tuple[str, frozenset[str]]]:
        return [
            (kb.kb_id, self._operations("knowledge_base", kb.kb_id, list(kb.operations)))
            for kb in self.ctx.resources.knowledge_bases
        ]

    def _tool_operations(self) -> list[tuple[str, frozenset[str]]]:
        return [
            (tool.tool_name, self._operations("tool", tool.tool_name, list(tool.operations)))
            for tool in self.ctx.resources.tools
        ]

    def available_tool_names(self) -> set[str]:
        """The names of the tools this run may list and call."""
        builtin = set(BUILTIN_TOOL_NAMES)
        names = {name for name in self._tools if name not in builtin}
        names |= {"langbot_list_assets", "langbot_get_current_event"}
        if self._history_available():
            names.add("langbot_history_page")
        if any("retrieve" in ops for _, ops in self._kb_operations()):
            names.add("langbot_retrieve_knowledge")
        tool_ops = [ops for _, ops in self._tool_operations()]
        if any("detail" in ops for ops in tool_ops):
            names.add("langbot_get_tool_detail")
        if any("call" in ops for ops in tool_ops):
            names.add("langbot_call_tool")
        names |= self._box_tool_names(self._tool_operations())
        return names & set(self._tools)

    def mcp_tools(
        self, *, include_unavailable: bool = False, include_run_token: bool = False
    ) -> list[dict[str, Any]]:
        """The run's tools as MCP ``tools/list`` entries (only the granted ones unless
        ``include_unavailable``)."""
        allowed = None if include_unavailable else self.available_tool_names()
        tools = [
            bound.spec.to_mcp_tool()
            for name, bound in sorted(self._tools.items())
            if allowed is None or name in allowed
        ]
        return [with_run_token(tool) for tool in tools] if include_run_token else tools

    # ------------------------------------------------------------------ calls

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """Run a listed tool; raises ``ValueError`` for a tool this run may not use,
        pydantic's ``ValidationError`` for bad arguments, and whatever the run API
        raises (``PermissionDeniedError``, ``AgentAPIException``)."""
        bound = self._tools.get(name) if name in self.available_tool_names() else None
        if bound is None:
            raise ValueError(f"Unknown LangBot external tool: {name!r} (not offered to this run)")
        args = bound.spec.args_model.model_validate(arguments or {})
        return await bound.handler(args)

    async def call_mcp_tool(
        self, name: str, arguments: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """:meth:`call_tool` answered as an MCP ``tools/call`` result: failures become
        ``isError`` results carrying the run API's code."""
        try:
            value = await self.call_tool(name, arguments)
        except AgentAPIException as exc:
            return mcp_error_result(exc.error.message, code=exc.code)
        except ValidationError as exc:
            return mcp_error_result(
                f"invalid arguments for {name}: {exc.error_count()} error(s): "
                + "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()),
                code="invalid_argument",
            )
        except ValueError as exc:
            return mcp_error_result(str(exc), code="not_found")
        except Exception as exc:  # a tool's own bug must not take the server down
            logger.exception("LangBot tool %s failed", name)
            return mcp_error_result(f"{type(exc).__name__}: {exc}", code="runtime_error")
        return mcp_result(value)

    # ------------------------------------------------------------------ the tools

    def _asset_summary(self, asset_types: list[AssetType], include_schemas: bool) -> dict[str, Any]:
        wanted = set(asset_types) or set(ASSET_TYPES)
        tool_ops = dict(self._tool_operations())
        data: dict[str, Any] = {"run_id": self.ctx.run_id, "asset_types": sorted(wanted)}
        if "event" in wanted:
            data["event"] = {"available": True, "tool_name": "langbot_get_current_event"}
        if "history" in wanted:
            data["history"] = {
                "available": self._history_available(),
                "tool_name": "langbot_history_page",
            }
        if "knowledge_bases" in wanted:
            ops = dict(self._kb_operations())
            data["knowledge_bases"] = [
                {
                    "kb_id": kb.kb_id,
                    "name": kb.kb_name,
                    "type": kb.kb_type,
                    "operations": sorted(ops[kb.kb_id]),
                }
                for kb in self.ctx.resources.knowledge_bases
            ]
        if "tools" in wanted:
            data["tools"] = [
                {
                    "tool_name": tool.tool_name,
                    "type": tool.tool_type,
                    "description": tool.description,
                    "operations": sorted(tool_ops[tool.tool_name]),
                }
                for tool in self.ctx.resources.tools
                if tool.tool_type != PLATFORM_TOOL_TYPE
            ]
        if "platform_tools" in wanted:  # the host's platform actions (event_reply, ...)
            data["platform_tools"] = [
                {
                    "tool_name": tool.tool_name,
                    "description": tool.description,
                    "operations": sorted(tool_ops[tool.tool_name]),
                    **({"schema": jsonable(tool.parameters or {})} if include_schemas else {}),
                }
                for tool in self.ctx.resources.tools
                if tool.tool_type == PLATFORM_TOOL_TYPE
            ]
        if "mcp_tools" in wanted:
            data["mcp_tools"] = [
                {
                    "tool_name": tool["name"],
                    "description": tool.get("description"),
                    **({"schema": tool["inputSchema"]} if include_schemas else {}),
                }
                for tool in self.mcp_tools()
            ]
        if "skills" in wanted:
            data["skills"] = [
                {
                    "skill_name": skill.skill_name,
                    "display_name": skill.display_name,
                    "description": skill.description,
                }
                for skill in self.ctx.resources.skills
            ]
        return data

    @agent_tool(
        name="langbot_list_assets",
        description="List the LangBot event, history, knowledge bases, ordinary tools, "
        "platform action tools, skills and MCP tools this run may use.",
        args_model=ListAssetsArgs,
        read_only=True,
    )
    async def list_assets(self, args: ListAssetsArgs) -> dict[str, Any]:
        """What the run was granted, by asset type."""
        return self._asset_summary(args.asset_types, args.include_schemas)

    @agent_tool(
        name="langbot_get_current_event",
        description="Return the current LangBot event with its input, actor, subject, "
        "resources, context, state and runtime.",
        args_model=EmptyArgs,
        read_only=True,
    )
    async def get_current_event(self, args: EmptyArgs) -> dict[str, Any]:
        """The run's context as the harness needs it."""
        ctx = self.ctx
        return {
            "run_id": ctx.run_id,
            "trigger": jsonable(ctx.trigger),
            "event": jsonable(ctx.event),
            "conversation": jsonable(ctx.conversation),
            "actor": jsonable(ctx.actor),
            "subject": jsonable(ctx.subject),
            "input": {
                "text": ctx.input.to_text(),
                "attachments": jsonable(ctx.input.attachments),
                "contents": jsonable(ctx.input.contents),
            },
            "resources": jsonable(ctx.resources),
            "context": jsonable(ctx.context),
            "state": jsonable(ctx.state),
            "runtime": jsonable(ctx.runtime),
        }

    @agent_tool(
        name="langbot_history_page",
        description="Page through the LangBot conversation history of this run.",
        args_model=HistoryPageArgs,
        read_only=True,
    )
    async def history_page(self, args: HistoryPageArgs) -> dict[str, Any]:
        """A transcript page through the run API."""
        return jsonable(await self.api.history_page(**args.model_dump()))

    @agent_tool(
        name="langbot_retrieve_knowledge",
        description="Retrieve documents from a LangBot knowledge base granted to this run.",
        args_model=RetrieveKnowledgeArgs,
        read_only=True,
    )
    async def retrieve_knowledge(self, args: RetrieveKnowledgeArgs) -> list[dict[str, Any]]:
        """Retrieval through the run API."""
        query = (args.query_text or args.query or "").strip()
        if not query:
            raise AgentAPIException.of("invalid_argument", "query_text is required")
        return await self.api.retrieve_knowledge(
            kb_id=args.kb_id, query_text=query, top_k=args.top_k, filters=args.filters
        )

    @agent_tool(
        name="langbot_get_tool_detail",
        description="Return the description and parameter schema of a LangBot tool "
        "granted to this run.",
        args_model=GetToolDetailArgs,
        read_only=True,
    )
    async def get_tool_detail(self, args: GetToolDetailArgs) -> dict[str, Any]:
        """A tool's detail through the run API."""
        return dict(await self.api.get_tool_detail(tool_name=args.tool_name))

    @agent_tool(
        name="langbot_call_tool",
        description="Call a LangBot tool granted to this run.",
        args_model=CallToolArgs,
    )
    async def call_langbot_tool(self, args: CallToolArgs) -> Any:
        """A tool call through the run API (the same checks as ``api.call_tool``)."""
        return await self.api.call_tool(tool_name=args.tool_name, parameters=args.parameters)


#: The names of the tools this module defines (subclass tools are listed always).
BUILTIN_TOOL_NAMES: frozenset[str] = frozenset(
    tool["name"] for tool in AgentRunExternalTools.all_mcp_tools()
)
