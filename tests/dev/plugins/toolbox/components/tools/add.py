from typing import Any

from langbot_plugin.api.definition.components.tool.tool import Tool
from langbot_plugin.api.entities.builtin.provider.session import Session


class Add(Tool):
    async def call(self, params: dict[str, Any], session: Session, query_id: int) -> Any:
        return {"sum": params["a"] + params["b"]}
