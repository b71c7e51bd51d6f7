from langbot_plugin.api.definition.plugin import BasePlugin


class OpenAIRunnerPlugin(BasePlugin):
    """Nothing to set up: the runner reads its endpoint from its own settings."""
