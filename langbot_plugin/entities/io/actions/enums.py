"""Action names as the enums a host passes to ``Handler.call_action`` (the reference's
path; built from the action catalogue in :mod:`langbot_plugin.protocol.action_enums`)."""

from langbot_plugin.protocol.action_enums import (
    ActionType,
    CommonAction,
    LangBotToRuntimeAction,
    PluginToRuntimeAction,
    RuntimeToLangBotAction,
    RuntimeToPluginAction,
)

__all__ = [
    "ActionType",
    "CommonAction",
    "LangBotToRuntimeAction",
    "PluginToRuntimeAction",
    "RuntimeToLangBotAction",
    "RuntimeToPluginAction",
]
