"""How a reference peer reads request frames (run by the reference venv, or by the
released host's, whose ``langbot_plugin`` is the reference's 0.7.16).

Reads a list of request frames as JSON on stdin and validates each with the reference's
``ActionRequest``, the model its ``Handler`` reads every request with. Prints, for each,
``{"ok": dump}`` or ``{"error": text}``.
"""

from __future__ import annotations

import json
import sys

from langbot_plugin.entities.io.req import ActionRequest

answers = []
for frame in json.load(sys.stdin):
    try:
        answers.append({"ok": ActionRequest.model_validate(frame).model_dump(mode="json")})
    except Exception as exc:  # the refusal is the answer
        answers.append({"error": str(exc)})
json.dump(answers, sys.stdout)
