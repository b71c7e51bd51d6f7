from langbot_plugin.api.definition.plugin import BasePlugin


class NotesPage(BasePlugin):
    """Nothing to set up: the page keeps its notes in the plugin's storage."""
