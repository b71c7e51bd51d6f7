from typing import Any

from langbot_plugin.api.definition.components.tool.tool import Tool


class Remember(Tool):
    async def call(self, params: dict[str, Any], session: Any, query_id: int) -> dict[str, Any]:
        await self.plugin.set_plugin_storage(params["key"], params["note"].encode())
        stored = await self.plugin.get_plugin_storage(params["key"])
        keys = sorted(await self.plugin.get_plugin_storage_keys())
        return {"stored": stored.decode(), "keys": keys}
