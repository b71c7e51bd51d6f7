from langbot_plugin.api.definition.plugin import BasePlugin


class McpAgent(BasePlugin):
    """Nothing to set up: the runner starts the external agent for each run."""
