"""A :class:`~langbot_plugin.host.scripted.HostModel` backed by an OpenAI-compatible endpoint.

``POST {base_url}/chat/completions`` with the run's messages and tools, as JSON or as
server-sent events when streaming. The key is read from an environment variable, so
it never appears on a command line. Errors of the endpoint (unreachable, a non-2xx
answer, a body that is not a completion) become :class:`ModelEndpointError` with the
status and the start of the body, which the runner sees as a failed model call
(code ``not_ready.model_endpoint``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, cast

import aiohttp

from langbot_plugin.rpc.errors import NotReadyError

__all__ = ["ModelEndpointError", "OpenAIModel"]


class ModelEndpointError(NotReadyError):
    """The model endpoint could not be reached or did not answer with a completion
    (wire code ``not_ready.model_endpoint``, retryable)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="not_ready.model_endpoint", retryable=True)


def _message_for_api(message: dict[str, Any]) -> dict[str, Any]:
    """A host message (``content`` text or parts) as the chat completions API takes it."""
    out: dict[str, Any] = {"role": message.get("role") or "user"}
    content = message.get("content")
    if isinstance(content, list):
        parts: list[dict[str, Any]] = []
        for raw in cast(list[Any], content):
            if not isinstance(raw, dict):
                continue
            part = cast(dict[str, Any], raw)
            if part.get("type") == "text":
                parts.append({"type": "text", "text": str(part.get("text") or "")})
            elif part.get("type") == "image_url" and part.get("image_url"):
                parts.append({"type": "image_url", "image_url": part["image_url"]})
        content = parts
    out["content"] = content if content is not None else ""
    for key in ("name", "tool_call_id", "tool_calls"):
        if message.get(key):
            out[key] = message[key]
    return out


def _tool_for_api(tool: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.get("name"),
            "description": tool.get("description") or tool.get("human_desc") or "",
            "parameters": tool.get("parameters") or {"type": "object", "properties": {}},
        },
    }


class OpenAIModel:
    """Chat completions at ``base_url`` (for example ``http://127.0.0.1:8000/v1``)."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        model_uuid: str | None = None,
        timeout: float = 120.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.model_uuid = model_uuid or model
        self.timeout = timeout

    def _request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], stream: bool
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [_message_for_api(m) for m in messages],
            "stream": stream,
        }
        if tools:
            body["tools"] = [_tool_for_api(t) for t in tools]
        if stream:
            body["stream_options"] = {"include_usage": True}
        return body

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    async def _post(
        self, session: aiohttp.ClientSession, body: dict[str, Any]
    ) -> aiohttp.ClientResponse:
        url = f"{self.base_url}/chat/completions"
        try:
            response = await session.post(url, json=body, headers=self._headers())
        except aiohttp.ClientError as exc:
            raise ModelEndpointError(f"cannot reach the model endpoint {url}: {exc}") from exc
        if response.status >= 300:
            text = (await response.text())[:300]
            response.release()
            raise ModelEndpointError(f"the model endpoint {url} answered {response.status}: {text}")
        return response

    def _session(self) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout))

    async def invoke(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        async with self._session() as session:
            response = await self._post(session, self._request(messages, tools, stream=False))
            async with response:
                try:
                    answer = await response.json(content_type=None)
                    choice = answer["choices"][0]["message"]
                except (ValueError, KeyError, IndexError, TypeError) as exc:
                    raise ModelEndpointError(
                        f"the model endpoint's answer is not a chat completion: {exc}"
                    ) from exc
        message: dict[str, Any] = {
            "role": "assistant",
            "content": choice.get("content"),
            "tool_calls": choice.get("tool_calls") or None,
        }
        usage = answer.get("usage")
        return message, usage if isinstance(usage, dict) else None

    async def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> AsyncIterator[dict[str, Any]]:
        calls: dict[int, dict[str, Any]] = {}
        usage: dict[str, Any] | None = None
        async with self._session() as session:
            response = await self._post(session, self._request(messages, tools, stream=True))
            async with response:
                async for raw in response.content:
                    line = raw.decode("utf-8", "replace").strip()
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        break
                    try:
                        event = json.loads(data)
                    except ValueError:
                        continue
                    if isinstance(event.get("usage"), dict):
                        usage = event["usage"]
                    for choice in event.get("choices") or []:
                        delta = choice.get("delta") or {}
                        _merge_tool_calls(calls, delta.get("tool_calls") or [])
                        text = delta.get("content")
                        if text:
                            yield {"chunk": {"role": "assistant", "content": text}}
        tool_calls = [calls[i] for i in sorted(calls)] or None
        yield {
            "chunk": {
                "role": "assistant",
                "content": "",
                "tool_calls": tool_calls,
                "is_final": True,
            }
        }
        if usage is not None:
            yield {"usage": usage}


def _merge_tool_calls(calls: dict[int, dict[str, Any]], deltas: list[Any]) -> None:
    """Assemble streamed tool-call fragments (the arguments arrive in pieces)."""
    for raw in deltas:
        if not isinstance(raw, dict):
            continue
        delta = cast(dict[str, Any], raw)
        index = int(delta.get("index") or 0)
        call = calls.setdefault(
            index, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
        )
        if delta.get("id"):
            call["id"] = delta["id"]
        function = delta.get("function") or {}
        if function.get("name"):
            call["function"]["name"] += function["name"]
        if function.get("arguments"):
            call["function"]["arguments"] += function["arguments"]
