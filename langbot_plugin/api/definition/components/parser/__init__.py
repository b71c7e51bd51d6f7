from langbot_plugin.api.definition.components.parser.parser import Parser

__all__ = ["Parser"]
