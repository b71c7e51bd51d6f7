from typing import Any

from langbot_plugin.api.definition.components.tool.tool import Tool


class Add(Tool):
    async def call(self, params: dict[str, Any]) -> dict[str, float]:
        return {"sum": float(params["a"]) + float(params["b"])}
