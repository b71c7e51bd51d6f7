"""Plugin -> host actions about bots, messages, queries and the host itself.

Also the three listings a plugin asks for that the runtime answers itself
(``list_plugins_manifest``, ``list_commands``, ``list_tools``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from langbot_plugin.api.entities.builtin.agent_runner.resources import EVENT_REPLY_TOOL
from langbot_plugin.api.entities.builtin.platform.message import MessageChain
from langbot_plugin.protocol.host_api.common import (
    CallerParams,
    QueryParams,
    RunScopedParams,
    to_host,
)
from langbot_plugin.protocol.spec import ActionSpec, Direction, Empty, P, Params, R, Result

__all__ = [
    "CALL_PLATFORM_API",
    "CREATE_NEW_CONVERSATION",
    "EVENT_REPLY_TOOL",
    "GET_BOTS",
    "GET_BOT_INFO",
    "GET_BOT_UUID",
    "GET_LANGBOT_VERSION",
    "GET_QUERY_VAR",
    "GET_QUERY_VARS",
    "LIST_COMMANDS",
    "LIST_PLUGINS_MANIFEST",
    "LIST_TOOLS",
    "PLATFORM_SEND_MESSAGE",
    "REASONING_LEVEL_FEATURE",
    "REPLY_MESSAGE",
    "REPLY_STREAM",
    "SEND_MESSAGE",
    "SET_QUERY_VAR",
    "BotInfo",
    "BotRef",
    "BotUuid",
    "Bots",
    "CommandList",
    "LangBotVersion",
    "PlatformApiParams",
    "PlatformApiResult",
    "PluginManifests",
    "QueryVar",
    "QueryVarKey",
    "QueryVarSet",
    "QueryVars",
    "ReplyParams",
    "ReplyStreamParams",
    "ReplyStreamResult",
    "SendMessageParams",
    "SendMessageResult",
    "ToolList",
    "traced_platform_call",
]


class ReplyParams(QueryParams):
    message_chain: MessageChain
    quote_origin: bool = False


class BotUuid(Result):
    bot_uuid: str


class QueryVarKey(QueryParams):
    key: str


class QueryVarSet(QueryVarKey):
    value: Any = None


class QueryVar(Result):
    value: Any


class QueryVars(Result):
    vars: dict[str, Any]


#: The ``api_features`` entry of a host that takes ``reasoning_level`` on model calls.
REASONING_LEVEL_FEATURE = "llm.reasoning_level"


class LangBotVersion(Result):
    version: str = ""
    api_features: list[str] = Field(default_factory=list[str])


class Bots(Result):
    """The workspace's bots (the 4.11.2 host sends one object per bot)."""

    bots: list[Any]


class BotRef(CallerParams):
    bot_uuid: str


class BotInfo(Result):
    bot: dict[str, Any]


class SendMessageParams(BotRef):
    target_type: str
    target_id: str
    message_chain: MessageChain


class SendMessageResult(Result):
    result: Any = None


class PlatformApiParams(RunScopedParams):
    """A plugin's call names its bot; a run's call (with ``run_id``) may name a context
    tool (``context_tool="event_reply"``) and files to send (``file_ids``) instead."""

    bot_uuid: str | None = None
    action: str
    params: dict[str, Any] = Field(default_factory=dict[str, Any])
    context_tool: str | None = None
    file_ids: list[str] | None = None


class PlatformApiResult(Result):
    result: Any


#: The adapter action ``call_platform_api`` names to send a message (a platform action,
#: carried in the payload, not an RPC action).
PLATFORM_SEND_MESSAGE = "send_message"


def traced_platform_call(action: str) -> str:
    """The tool name a run's traced ``call_platform_api(action)`` is reported under."""
    return f"platform_{action}"


#: The most characters one ``reply_stream`` update may carry (the 4.11.2 SDK's limit).
MAX_REPLY_STREAM_TEXT = 200_000


class ReplyStreamParams(RunScopedParams):
    """One step of an explicit streaming reply: ``update`` replaces the whole text so
    far; ``finish`` delivers it; ``abort`` drops it."""

    stream_id: str = Field(min_length=1, max_length=128)
    operation: Literal["update", "finish", "abort"]
    text: str = Field(default="", max_length=MAX_REPLY_STREAM_TEXT)


class ReplyStreamResult(Result):
    result: Any = None


class PluginManifests(Result):
    plugins: list[dict[str, Any]]


class CommandList(Result):
    commands: list[dict[str, Any]]


class ToolList(Result):
    tools: list[dict[str, Any]]


REPLY_MESSAGE = to_host(
    "reply_message", ReplyParams, Result, timeout=180, doc="reply to the query's message"
)
GET_BOT_UUID = to_host("get_bot_uuid", QueryParams, BotUuid)
SET_QUERY_VAR = to_host("set_query_var", QueryVarSet, Result)
GET_QUERY_VAR = to_host("get_query_var", QueryVarKey, QueryVar)
GET_QUERY_VARS = to_host("get_query_vars", QueryParams, QueryVars)
CREATE_NEW_CONVERSATION = to_host("create_new_conversation", QueryParams, Result)
GET_LANGBOT_VERSION = to_host("get_langbot_version", RunScopedParams, LangBotVersion)
GET_BOTS = to_host("get_bots", CallerParams, Bots)
GET_BOT_INFO = to_host("get_bot_info", BotRef, BotInfo)
SEND_MESSAGE = to_host("send_message", SendMessageParams, SendMessageResult)
CALL_PLATFORM_API = to_host("call_platform_api", PlatformApiParams, PlatformApiResult)
REPLY_STREAM = to_host(
    "reply_stream",
    ReplyStreamParams,
    ReplyStreamResult,
    doc="stream a reply of a run to its conversation (needs available_apis.reply_stream)",
)


def _workspace_listing(name: str, params: type[P], result: type[R], what: str) -> ActionSpec[P, R]:
    doc = f"the {what} of the plugins in the caller's workspace (answered by the runtime)"
    return ActionSpec(name, params, result, direction=Direction.PLUGIN_TO_RUNTIME, doc=doc)


LIST_PLUGINS_MANIFEST = _workspace_listing(
    "list_plugins_manifest", Empty, PluginManifests, "manifests"
)
LIST_COMMANDS = _workspace_listing("list_commands", Params, CommandList, "commands")
LIST_TOOLS = _workspace_listing("list_tools", Params, ToolList, "tools")
