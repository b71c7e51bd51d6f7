from langbot_plugin.api.definition.plugin import BasePlugin


class WordGuard(BasePlugin):
    """The listener reads the blocked words from this plugin's settings."""
