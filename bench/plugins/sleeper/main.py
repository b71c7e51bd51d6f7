from langbot_plugin.api.definition.plugin import BasePlugin


class SleeperPlugin(BasePlugin):
    """Nothing to set up: the benchmark only starts and cancels its runner."""
