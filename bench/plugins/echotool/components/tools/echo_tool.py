from __future__ import annotations

from typing import Any

from langbot_plugin.api.definition.components.tool.tool import Tool


class EchoTool(Tool):
    async def call(self, params: dict[str, Any], session: Any, query_id: int) -> Any:
        return {"echo": params}
