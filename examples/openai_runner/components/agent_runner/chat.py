"""An AgentRunner on an OpenAI-compatible chat completions endpoint.

It posts the conversation to ``<base_url>/chat/completions`` with ``stream: true``
(OpenAI, vLLM, Ollama, LM Studio and most gateways speak it), turns the server-sent
``data:`` lines into cumulative ``message.delta`` results, and ends with
``run.completed`` carrying the answer and the usage the server reports. The key is
read from the environment variable the ``api_key_env`` setting names, never from the
settings themselves.

The last ``remember_turns`` exchanges are kept in the conversation's runner state
(``state.updated``), so the next run of the same conversation sends them again;
LangBot persists that state across restarts.
"""

import json
import os
from collections.abc import AsyncGenerator
from typing import Any

import aiohttp

from langbot_plugin.api.definition.components.agent_runner.runner import AgentRunner
from langbot_plugin.api.entities.builtin.agent_runner import AgentRunContext, AgentRunResult
from langbot_plugin.api.entities.builtin.agent_runner.streaming import CumulativeText

HISTORY_KEY = "history"


class EndpointError(Exception):
    """The endpoint answered with an error, or not at all."""

    def __init__(self, message: str, code: str, retryable: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self.retryable = retryable


async def stream_completion(
    url: str, payload: dict[str, Any], headers: dict[str, str]
) -> AsyncGenerator[dict[str, Any]]:
    """The ``data:`` objects of a streamed chat completion, in order."""
    timeout = aiohttp.ClientTimeout(total=300, sock_connect=10)
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout) as http,
            http.post(url, json=payload, headers=headers) as response,
        ):
            if response.status >= 400:
                body = (await response.text())[:300]
                raise EndpointError(
                    f"{url} answered {response.status}: {body}",
                    "openai.http_error",
                    retryable=response.status in (429, 500, 502, 503),
                )
            async for raw in response.content:
                line = raw.decode("utf-8").strip()
                if not line.startswith("data:"):
                    continue
                data = line[len("data:") :].strip()
                if data == "[DONE]":
                    return
                yield json.loads(data)
    except aiohttp.ClientError as exc:
        raise EndpointError(f"cannot reach {url}: {exc}", "openai.unreachable", True) from exc


class Chat(AgentRunner):
    async def run(self, ctx: AgentRunContext) -> AsyncGenerator[AgentRunResult]:
        config = ctx.config
        url = str(config.get("base_url") or "").rstrip("/") + "/chat/completions"
        key = os.environ.get(str(config.get("api_key_env") or "OPENAI_API_KEY"), "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        history: list[dict[str, str]] = list(ctx.state.conversation.get(HISTORY_KEY) or [])
        question = ctx.input.to_text()
        payload = {
            "model": str(config.get("model") or ""),
            "stream": True,
            "stream_options": {"include_usage": True},
            "messages": [
                {"role": "system", "content": str(config.get("system-prompt") or "")},
                *history,
                {"role": "user", "content": question},
            ],
        }
        text = CumulativeText()
        usage: dict[str, Any] | None = None
        try:
            async for event in stream_completion(url, payload, headers):
                usage = event.get("usage") or usage
                for choice in event.get("choices") or []:
                    piece = (choice.get("delta") or {}).get("content")
                    if piece:
                        yield AgentRunResult.message_delta(ctx.run_id, text.chunk(piece))
        except EndpointError as exc:
            yield AgentRunResult.run_failed(ctx.run_id, str(exc), exc.code, exc.retryable)
            return
        turns = int(config.get("remember_turns") or 0)
        exchange = [
            {"role": "user", "content": question},
            {"role": "assistant", "content": text.text},
        ]
        remembered = [*history, *exchange][-2 * turns :] if turns > 0 else []
        yield AgentRunResult.state_updated(ctx.run_id, HISTORY_KEY, remembered, "conversation")
        yield AgentRunResult.run_completed(ctx.run_id, text.message(), usage=usage)
