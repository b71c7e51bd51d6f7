"""The Box tools a run exposes to an external harness (listed when the run has
``available_apis.box``; ``langbot_reply_files`` also needs the ``event_reply`` tool).

Each is the run API's call of the same name, so it is held to the same grants; results
are the API's models as JSON.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from langbot_plugin.api.agent_tools._tool_models import EmptyArgs, jsonable
from langbot_plugin.api.agent_tools.decorators import agent_tool
from langbot_plugin.api.entities.builtin.agent_runner.box import BoxAcquireRequest
from langbot_plugin.api.proxies.agent_run.replies import EVENT_REPLY_TOOL

if TYPE_CHECKING:
    from langbot_plugin.api.entities.builtin.agent_runner.context import AgentRunContext
    from langbot_plugin.api.proxies.agent_run import AgentRunAPIProxy

__all__ = [
    "BOX_TOOL_NAMES",
    "REPLY_FILES_TOOL",
    "BindBoxArgs",
    "BoxAcquireRequest",
    "BoxToolsMixin",
    "ExportBoxArgs",
    "ImportBoxArgs",
    "ReplyFilesArgs",
]


class BindBoxArgs(EmptyArgs):
    box_id: str = Field(min_length=1)


class ImportBoxArgs(EmptyArgs):
    #: Input attachment refs; ``None`` imports all of them.
    attachment_ids: list[str] | None = None


class ExportBoxArgs(EmptyArgs):
    paths: list[str] = Field(min_length=1, description="absolute paths inside the bound Box")


class ReplyFilesArgs(EmptyArgs):
    file_ids: list[str] = Field(min_length=1, max_length=100)


BOX_TOOL_NAMES = frozenset(
    {
        "langbot_get_box_status",
        "langbot_list_boxes",
        "langbot_acquire_box",
        "langbot_bind_box",
        "langbot_import_box_attachments",
        "langbot_export_box_files",
    }
)
REPLY_FILES_TOOL = "langbot_reply_files"


class BoxToolsMixin:
    """The Box tools of :class:`~.external_tools.AgentRunExternalTools`."""

    api: AgentRunAPIProxy
    ctx: AgentRunContext

    def _box_tool_names(self, tool_operations: list[tuple[str, frozenset[str]]]) -> set[str]:
        if not self.ctx.context.available_apis.allows("box"):
            return set()
        names = set(BOX_TOOL_NAMES)
        if any(name == EVENT_REPLY_TOOL and "call" in ops for name, ops in tool_operations):
            names.add(REPLY_FILES_TOOL)
        return names

    @agent_tool(
        name="langbot_get_box_status",
        description="Whether the sandbox is available, its capacity, and a required reuse key.",
        args_model=EmptyArgs,
        read_only=True,
    )
    async def get_box_status(self, args: EmptyArgs) -> Any:
        return jsonable(await self.api.get_box_status())

    @agent_tool(
        name="langbot_list_boxes",
        description="The sandboxes this run may use.",
        args_model=EmptyArgs,
        read_only=True,
    )
    async def list_boxes(self, args: EmptyArgs) -> Any:
        return jsonable(await self.api.list_boxes())

    @agent_tool(
        name="langbot_acquire_box",
        description="Create or reuse the sandbox of a reuse key (within this run's scope); "
        "bind it before using sandbox tools.",
        args_model=BoxAcquireRequest,
    )
    async def acquire_box(self, args: BoxAcquireRequest) -> Any:
        return jsonable(await self.api.acquire_box(args.reuse_key, options=args.options))

    @agent_tool(
        name="langbot_bind_box",
        description="Bind a sandbox to this run (once) before exec/read/write; returns the "
        "run's output folder.",
        args_model=BindBoxArgs,
    )
    async def bind_box(self, args: BindBoxArgs) -> Any:
        return jsonable(await self.api.bind_box(args.box_id))

    @agent_tool(
        name="langbot_import_box_attachments",
        description="Copy the event's attachments (by ref; all when omitted) into the bound "
        "sandbox; returns their paths.",
        args_model=ImportBoxArgs,
    )
    async def import_box_attachments(self, args: ImportBoxArgs) -> Any:
        return jsonable(await self.api.import_box_attachments(args.attachment_ids))

    @agent_tool(
        name="langbot_export_box_files",
        description="Export files of the bound sandbox; returns file ids (nothing is sent).",
        args_model=ExportBoxArgs,
    )
    async def export_box_files(self, args: ExportBoxArgs) -> Any:
        return jsonable(await self.api.export_box_files(args.paths))

    @agent_tool(
        name=REPLY_FILES_TOOL,
        description="Send exported files (their ids) to the user as a reply.",
        args_model=ReplyFilesArgs,
    )
    async def reply_files(self, args: ReplyFilesArgs) -> Any:
        return jsonable(await self.api.reply_files(args.file_ids))
