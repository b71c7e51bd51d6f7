"""``LangBotToBoxAction``: the Box's action names as an enum, from :mod:`box_runtime.protocol`."""

from __future__ import annotations

from box_runtime.protocol import ALL_ACTIONS
from langbot_plugin.protocol.action_enums import action_enum, action_members

__all__ = ["LangBotToBoxAction"]

#: ``BOX_STATUS`` -> ``"box_status"`` ...; the reference's names drop the ``BOX_`` prefix
#: (``LangBotToBoxAction.STATUS``), so both spellings are members.
_MEMBERS = action_members(ALL_ACTIONS)
_MEMBERS.update({name.removeprefix("BOX_"): value for name, value in list(_MEMBERS.items())})

LangBotToBoxAction = action_enum("LangBotToBoxAction", _MEMBERS)
