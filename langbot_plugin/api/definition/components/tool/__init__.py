from langbot_plugin.api.definition.components.tool.tool import Tool

__all__ = ["Tool"]
