"""The scripted model of the harness: :class:`ScriptedLLM`, a named
:class:`~langbot_plugin.host.scripted.ScriptedModel` with helpers for tool calls.

A script is a list of replies consumed in order (the last one repeats), or a function
of the request's messages. A reply is a text, or a message dict such as the one
:func:`tool_call` builds::

    llm = ScriptedLLM([tool_call("add", {"a": 2, "b": 3}), "2 + 3 = 5"])
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from langbot_plugin.host.scripted import Reply, ScriptedModel

__all__ = ["Reply", "ScriptedLLM", "tool_call"]


def tool_call(name: str, arguments: Mapping[str, Any] | None = None, *, id: str = "") -> Reply:
    """A model reply asking for one tool call (``arguments`` sent as JSON text, as
    OpenAI-style models send them); ``id`` defaults to ``call_<name>``."""
    call = {
        "id": id or f"call_{name}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(dict(arguments or {}))},
    }
    return {"content": None, "tool_calls": [call]}


class ScriptedLLM(ScriptedModel):
    """A model the harness's host serves under ``model_uuid`` (``scripted-model``).

    Without a script it echoes the last message (``scripted reply to: <text>``).
    :attr:`requests` holds the messages of every call it answered, in order.
    """

    @property
    def last_request(self) -> list[dict[str, Any]]:
        """The messages of the most recent call (``[]`` before the first)."""
        return self.requests[-1] if self.requests else []
