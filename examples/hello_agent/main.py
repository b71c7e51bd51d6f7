from langbot_plugin.api.definition.plugin import BasePlugin


class HelloAgent(BasePlugin):
    """Nothing to set up: the components do the work."""
