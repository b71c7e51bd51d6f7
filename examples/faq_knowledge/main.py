from langbot_plugin.api.definition.plugin import BasePlugin


class FaqKnowledge(BasePlugin):
    """Nothing to set up: the parser and the engine do the work."""
