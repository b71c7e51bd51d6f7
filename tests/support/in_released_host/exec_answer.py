"""The released host's answer to its ``exec`` tool from a Box result: its
``BoxService._serialize_result`` (the 4,000-character cut) then the native tool
loader's ``_normalize_exec_result`` (the preview and the byte caps).

stdin: {"results": [box_exec result, ...]}
stdout: {"answers": [the tool's answer, ...]}
"""

from __future__ import annotations

import inspect
import json
import sys
from typing import Any

from langbot.pkg.box.service import BoxService
from langbot.pkg.provider.tools.loaders.native import NativeToolLoader

from langbot_plugin.box.models import BoxExecutionResult

PAYLOAD: dict[str, Any] = json.load(sys.stdin)
service = BoxService.__new__(BoxService)  # only its output limit is read: its default
limit = inspect.signature(BoxService.__init__).parameters["output_limit_chars"].default
service.output_limit_chars = limit
loader = NativeToolLoader.__new__(NativeToolLoader)
answers = [
    loader._normalize_exec_result(service._serialize_result(BoxExecutionResult(**result)))
    for result in PAYLOAD["results"]
]
json.dump({"answers": answers}, sys.stdout)
