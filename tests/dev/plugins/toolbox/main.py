from langbot_plugin.api.definition.plugin import BasePlugin


class Toolbox(BasePlugin):
    pass
