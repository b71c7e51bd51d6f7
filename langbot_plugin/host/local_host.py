"""A small in-memory host: what a plugin runtime asks of LangBot, served locally.

It keeps plugin settings, binary storage and a log of every call, and answers model
calls from a :class:`ScriptedModel`. Tests use it to check what reached the host;
the demo and local development use it instead of a full LangBot.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from langbot_plugin.protocol.containers import PluginSettings
from langbot_plugin.rpc import NotFoundError, RequestContext, Route, RouteTable

__all__ = ["HostCall", "LocalHost", "ScriptedModel"]

Reply = str | dict[str, Any]


def _message(reply: Reply) -> dict[str, Any]:
    base: dict[str, Any] = {
        "role": "assistant",
        "name": None,
        "content": None,
        "tool_calls": None,
        "tool_call_id": None,
        "resp_message_id": None,
        "provider_specific_fields": None,
    }
    if isinstance(reply, str):
        return {**base, "content": reply}
    return {**base, **reply}


class ScriptedModel:
    """An LLM that answers from a script.

    ``replies`` is a list consumed in order (the last one repeats), each a text or a
    message dict (for example one with ``tool_calls``), or a function of the request's
    messages returning one.
    """

    def __init__(
        self,
        replies: list[Reply] | Callable[[list[dict[str, Any]]], Reply] | None = None,
        *,
        model_uuid: str = "scripted-model",
        chunk_chars: int = 8,
    ) -> None:
        self.model_uuid = model_uuid
        self.chunk_chars = chunk_chars
        self._replies = replies if replies is not None else self._echo
        self._index = 0
        self.requests: list[list[dict[str, Any]]] = []

    @staticmethod
    def _echo(messages: list[dict[str, Any]]) -> Reply:
        last = messages[-1].get("content") if messages else ""
        return f"scripted reply to: {last}"

    def answer(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        self.requests.append(messages)
        if callable(self._replies):
            return _message(self._replies(messages))
        script = self._replies
        reply = script[min(self._index, len(script) - 1)]
        self._index += 1
        return _message(reply)

    def chunks(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        """The message cut into incremental stream chunks (the last one is final)."""
        text = str(message.get("content") or "")
        pieces = [
            text[i : i + self.chunk_chars] for i in range(0, len(text), self.chunk_chars)
        ] or [""]
        chunks = [
            {**message, "content": piece, "tool_calls": None, "is_final": False} for piece in pieces
        ]
        chunks[-1] = {**chunks[-1], "tool_calls": message.get("tool_calls"), "is_final": True}
        return chunks


@dataclass(frozen=True, slots=True)
class HostCall:
    action: str
    data: dict[str, Any]
    context: dict[str, Any] | None


@dataclass
class LocalHost:
    """Serves the runtime -> host actions from memory (a :class:`Dispatcher`)."""

    models: dict[str, ScriptedModel] = field(
        default_factory=lambda: {"scripted-model": ScriptedModel()}
    )
    version: str = "v4.11.2"
    settings: dict[str, PluginSettings] = field(default_factory=dict[str, PluginSettings])
    storage: dict[tuple[str, str, str], bytes] = field(
        default_factory=dict[tuple[str, str, str], bytes]
    )
    calls: list[HostCall] = field(default_factory=list[HostCall])

    def __post_init__(self) -> None:
        unary: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "initialize_plugin_settings": self._initialize_settings,
            "get_plugin_settings": self._get_settings,
            "get_langbot_version": lambda _: {"version": self.version, "api_features": []},
            "get_llm_models": lambda _: {"llm_models": list(self.models)},
            "invoke_llm": self._invoke_llm,
            "set_binary_storage": self._set_storage,
            "get_binary_storage": self._get_storage,
            "get_binary_storage_keys": self._storage_keys,
            "delete_binary_storage": self._delete_storage,
        }
        self._routes = RouteTable(
            {name: Route(self._recorded(fn)) for name, fn in unary.items()},
            invoke_llm_stream=Route(self._invoke_llm_stream, stream=True),
        )

    def resolve(self, action: str) -> Route | None:
        return self._routes.resolve(action)

    def calls_of(self, action: str) -> list[HostCall]:
        return [c for c in self.calls if c.action == action]

    def _record(self, ctx: RequestContext) -> None:
        self.calls.append(HostCall(ctx.request.action, dict(ctx.data), ctx.context))

    def _recorded(self, fn: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
        async def handler(ctx: RequestContext) -> dict[str, Any]:
            self._record(ctx)
            return fn(ctx.data)

        return handler

    # ----------------------------------------------------------------- settings

    def _initialize_settings(self, data: dict[str, Any]) -> dict[str, Any]:
        identity = f"{data['plugin_author']}/{data['plugin_name']}"
        current = self.settings.get(identity)
        if current is None:
            current = PluginSettings(
                installation_uuid=str(uuid.uuid4()), runtime_revision=1, artifact_digest="0" * 64
            )
        current.install_source = str(data.get("install_source") or current.install_source)
        current.install_info = dict(data.get("install_info") or {})
        self.settings[identity] = current
        return {}

    def _get_settings(self, data: dict[str, Any]) -> dict[str, Any]:
        identity = f"{data['plugin_author']}/{data['plugin_name']}"
        return self.settings.get(identity, PluginSettings()).model_dump(mode="json")

    # ----------------------------------------------------------------- models

    def _model(self, data: dict[str, Any]) -> ScriptedModel:
        model = self.models.get(str(data.get("llm_model_uuid")))
        if model is None:
            raise NotFoundError(f"no model {data.get('llm_model_uuid')!r}")
        return model

    def _invoke_llm(self, data: dict[str, Any]) -> dict[str, Any]:
        message = self._model(data).answer(list(data.get("messages") or []))
        words = len(str(message.get("content") or "").split())
        usage = {"prompt_tokens": 1, "completion_tokens": words, "total_tokens": words + 1}
        return {"message": message, "usage": usage}

    async def _invoke_llm_stream(self, ctx: RequestContext) -> AsyncIterator[dict[str, Any]]:
        self._record(ctx)
        model = self._model(ctx.data)
        for chunk in model.chunks(model.answer(list(ctx.data.get("messages") or []))):
            yield {"chunk": chunk}

    # ----------------------------------------------------------------- storage

    def _key(self, data: dict[str, Any]) -> tuple[str, str, str]:
        return (str(data.get("owner_type")), str(data.get("owner")), str(data.get("key")))

    def _set_storage(self, data: dict[str, Any]) -> dict[str, Any]:
        self.storage[self._key(data)] = base64.b64decode(str(data.get("value_base64", "")))
        return {}

    def _get_storage(self, data: dict[str, Any]) -> dict[str, Any]:
        key = self._key(data)
        if key not in self.storage:
            raise NotFoundError(f"Storage with key {key[2]} not found")
        return {"value_base64": base64.b64encode(self.storage[key]).decode("ascii")}

    def _storage_keys(self, data: dict[str, Any]) -> dict[str, Any]:
        owner = (str(data.get("owner_type")), str(data.get("owner")))
        return {"keys": [k for (t, o, k) in self.storage if (t, o) == owner]}

    def _delete_storage(self, data: dict[str, Any]) -> dict[str, Any]:
        self.storage.pop(self._key(data), None)
        return {}
