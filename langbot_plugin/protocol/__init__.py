"""The typed catalogue of actions: one declaration per action, both dialects' names."""

from langbot_plugin.protocol.spec import ActionSpec, ActionTable, Empty, Params, Result

__all__ = ["ActionSpec", "ActionTable", "Empty", "Params", "Result"]
