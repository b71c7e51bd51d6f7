"""The model a ``lbp dev`` session serves to the plugin: echo, a script, or an endpoint.

- :func:`echo_model`: offline, answers ``echo: <last user text>`` (a runner that asks
  a model works out of the box).
- :func:`load_script`: a JSON or YAML file for a
  :class:`~langbot_plugin.host.scripted.ScriptedModel`: a list of replies (or
  ``{"replies": [...]}``), used in order, the last one repeating. A reply is a text,
  or a message such as ``{"content": "", "tool_calls": [{"name": "add", "arguments":
  {"a": 1}}]}`` (the short tool-call form is expanded to the API's).
- :func:`openai_model`: any OpenAI-compatible endpoint; the key comes from an
  environment variable.

Every model is offered to runs under :data:`DEV_MODEL_UUID` unless named otherwise.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, cast

from langbot_plugin.host.scripted import HostModel, Reply, ScriptedModel

__all__ = [
    "DEFAULT_KEY_ENV",
    "DEV_MODEL_UUID",
    "ModelSetupError",
    "echo_model",
    "load_script",
    "openai_model",
    "scripted_model",
]

DEV_MODEL_UUID = "dev-model"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"


class ModelSetupError(ValueError):
    """A model option cannot be used (a script that does not parse, a missing key)."""


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        parts = cast(list[Any], content)
        return " ".join(
            str(cast(dict[str, Any], p).get("text") or "") for p in parts if isinstance(p, dict)
        ).strip()
    return str(content or "")


def echo_model(model_uuid: str = DEV_MODEL_UUID) -> ScriptedModel:
    """Answers each request with ``echo: `` and the last user message's text."""

    def echo(messages: list[dict[str, Any]]) -> Reply:
        users = [m for m in messages if m.get("role") == "user"]
        return f"echo: {_text_of(users[-1]) if users else ''}"

    return ScriptedModel(echo, model_uuid=model_uuid)


def _tool_call(raw: Any, index: int) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ModelSetupError(f"tool call {index + 1} is not an object")
    call = cast(dict[str, Any], raw)
    if "function" in call:
        return call
    name = call.get("name")
    if not isinstance(name, str) or not name:
        raise ModelSetupError(f"tool call {index + 1} has no name")
    arguments = call.get("arguments", {})
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {
        "id": str(call.get("id") or f"call-{index + 1}"),
        "type": "function",
        "function": {"name": name, "arguments": text},
    }


def _reply(raw: Any, number: int) -> Reply:
    if isinstance(raw, str):
        return raw
    if not isinstance(raw, dict):
        raise ModelSetupError(f"reply {number} is neither a text nor a message object")
    reply = dict(cast(dict[str, Any], raw))
    calls = reply.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            raise ModelSetupError(f"reply {number}: tool_calls is not a list")
        reply["tool_calls"] = [_tool_call(c, i) for i, c in enumerate(cast(list[Any], calls))]
        reply.setdefault("content", "")
    return reply


def load_script(path: Path, model_uuid: str = DEV_MODEL_UUID) -> ScriptedModel:
    """The scripted model a file describes (see the module docstring)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ModelSetupError(f"cannot read {path}: {exc.strerror or exc}") from None
    import yaml

    try:
        if path.suffix.lower() in (".yaml", ".yml"):
            data: Any = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise ModelSetupError(f"{path} does not parse: {exc}") from None
    if isinstance(data, dict) and "replies" in data:
        data = cast(dict[str, Any], data)["replies"]
    if not isinstance(data, list) or not data:
        raise ModelSetupError(f"{path}: expected a non-empty list of replies")
    try:
        return scripted_model(cast(list[Any], data), model_uuid=model_uuid)
    except ModelSetupError as exc:
        raise ModelSetupError(f"{path}: {exc}") from None


def scripted_model(
    replies: list[Any], *, model_uuid: str = DEV_MODEL_UUID, chunk_chars: int = 8
) -> ScriptedModel:
    """A scripted model of ``replies`` in the script's form (short tool calls expanded)."""
    if not replies:
        raise ModelSetupError("expected a non-empty list of replies")
    expanded = [_reply(raw, n) for n, raw in enumerate(replies, start=1)]
    return ScriptedModel(expanded, model_uuid=model_uuid, chunk_chars=chunk_chars)


def openai_model(
    url: str, model: str, *, key_env: str = DEFAULT_KEY_ENV, model_uuid: str = DEV_MODEL_UUID
) -> HostModel:
    """An OpenAI-compatible endpoint; its key is ``$key_env`` (none sent when unset)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ModelSetupError(f"--llm-url {url!r} is not an http(s) URL")
    if not model:
        raise ModelSetupError("--llm-url needs --llm-model (the model name the endpoint serves)")
    from langbot_plugin.host.openai_model import OpenAIModel

    return OpenAIModel(url, model, api_key=os.environ.get(key_env) or None, model_uuid=model_uuid)
