from langbot_plugin.api.definition.plugin import BasePlugin


class SeedNotes(BasePlugin):
    """Nothing to set up: the runner does the work."""
