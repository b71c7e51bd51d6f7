from langbot_plugin.api.definition.plugin import BasePlugin


class BoxCoder(BasePlugin):
    """Nothing to set up: the runner works through the run's model and tools."""
