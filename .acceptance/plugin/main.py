from langbot_plugin.api.definition.plugin import BasePlugin


class EchoPlugin(BasePlugin):
    """Echoes messages, greets people and relays a question to the host's first LLM."""
