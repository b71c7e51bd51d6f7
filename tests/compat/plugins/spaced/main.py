from langbot_plugin.api.definition.plugin import BasePlugin


class WaifuBot(BasePlugin):
    async def initialize(self) -> None:
        pass
