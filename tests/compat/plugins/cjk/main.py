from langbot_plugin.api.definition.plugin import BasePlugin


class DocumentHelper(BasePlugin):
    pass
