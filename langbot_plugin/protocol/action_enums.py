"""Action names as the enums a caller passes to a ``Handler``'s ``call_action``.

The host library re-exports them (``langbot_plugin.entities.io.actions.enums``, the
reference's path); the proxies' handler seam (:mod:`langbot_plugin.protocol.handler_calls`)
uses them too. Built from the action catalogue (:mod:`langbot_plugin.protocol.catalogue`),
never written by hand: each enum holds the wire names of one direction, the member name
being the wire name in upper case (``PluginToRuntimeAction.REPLY_MESSAGE`` is
``"reply_message"``); both dialects' names are members. A few members keep the
reference's spelling beside the regular one (:data:`REFERENCE_SPELLINGS`). The reserved
actions the RPC session serves itself are :class:`CommonAction`.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum, EnumMeta
from typing import TYPE_CHECKING, Any

from langbot_plugin.protocol.catalogue import CATALOGUE, NOT_SERVED
from langbot_plugin.protocol.host_api.storage import GET_CONFIG_FILE
from langbot_plugin.protocol.spec import ActionSpec, Direction
from langbot_plugin.rpc.reserved import CANCEL, FILE_CHUNK, HEARTBEAT, PING, STREAM_ACK

__all__ = [
    "REFERENCE_SPELLINGS",
    "ActionType",
    "CommonAction",
    "LangBotToRuntimeAction",
    "PluginToRuntimeAction",
    "RuntimeToLangBotAction",
    "RuntimeToPluginAction",
    "action_enum",
    "action_members",
]

#: member name -> the regular member it also names (the reference's spellings)
REFERENCE_SPELLINGS: dict[str, str] = {"GET_KNOWLEDEGE_FILE_STREAM": "GET_KNOWLEDGE_FILE_STREAM"}


class _ActionTypeMeta(EnumMeta):
    if TYPE_CHECKING:
        # The direction enums are built from the catalogue at import time, so a type
        # checker cannot list their members: ``PluginToRuntimeAction.REPLY_MESSAGE`` is
        # typed as an ``ActionType`` (an unknown name still raises AttributeError).
        def __getattr__(cls, name: str) -> ActionType: ...


class ActionType(Enum, metaclass=_ActionTypeMeta):
    """Base of the action enums: a member's ``value`` is its wire name."""


class CommonAction(ActionType):
    """The reserved actions every session serves."""

    PING = PING
    HEARTBEAT = HEARTBEAT
    FILE_CHUNK = FILE_CHUNK
    CANCEL_ACTION = CANCEL
    STREAM_ACK = STREAM_ACK


def action_members(
    specs: Iterable[ActionSpec[Any, Any]], extra: Iterable[str] = ()
) -> dict[str, str]:
    """``{NAME: name}`` of every wire name of ``specs`` (aliases too) and ``extra``."""
    members: dict[str, str] = {}
    for name in [*(n for spec in specs for n in spec.names), *extra]:
        members.setdefault(name.upper(), name)
    for spelling, regular in REFERENCE_SPELLINGS.items():
        if regular in members:
            members[spelling] = members[regular]
    return members


def _of(*directions: Direction) -> list[ActionSpec[Any, Any]]:
    return [spec for spec in CATALOGUE if spec.direction in directions]


def action_enum(name: str, members: dict[str, str]) -> type[ActionType]:
    """An :class:`ActionType` enum of ``members`` (``{NAME: wire_name}``)."""
    built: type[ActionType] = ActionType(name, members, module=__name__)  # type: ignore[call-overload]
    return built


# The slot actions of the 0.7 shared runtime are runtime -> plugin; until they are
# declared they are named by the catalogue's NOT_SERVED list.
PluginToRuntimeAction = action_enum(
    "PluginToRuntimeAction",
    action_members(_of(Direction.PLUGIN_TO_RUNTIME, Direction.PLUGIN_TO_HOST)),
)
RuntimeToPluginAction = action_enum(
    "RuntimeToPluginAction", action_members(_of(Direction.RUNTIME_TO_PLUGIN), NOT_SERVED)
)
LangBotToRuntimeAction = action_enum(
    "LangBotToRuntimeAction",
    action_members(_of(Direction.HOST_TO_RUNTIME, Direction.HOST_TO_PLUGIN)),
)
# the reference lists the plugin's config-file read here as well
RuntimeToLangBotAction = action_enum(
    "RuntimeToLangBotAction",
    action_members([*_of(Direction.RUNTIME_TO_HOST), GET_CONFIG_FILE]),
)
