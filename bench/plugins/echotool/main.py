from langbot_plugin.api.definition.plugin import BasePlugin


class EchoToolPlugin(BasePlugin):
    """Nothing to set up: the benchmark only calls its tool."""
