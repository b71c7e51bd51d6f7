"""What the reference SDK's run API raises for error frames (run by the reference venv).

Reads ``[[action, message, data], ...]`` as JSON on stdin: each one an error answer
(``ActionCallError(message, data)``) to the run-API call ``action``. Prints the
``AgentAPIError`` the reference builds for each, as JSON.
"""

from __future__ import annotations

import json
import sys

from langbot_plugin.api.proxies.runner.common import _build_agent_api_exception
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction
from langbot_plugin.entities.io.errors import ActionCallError

built = []
for action, message, data in json.load(sys.stdin):
    exc = _build_agent_api_exception(PluginToRuntimeAction(action), ActionCallError(message, data))
    built.append(exc.error.model_dump(mode="json"))
print(json.dumps(built))
