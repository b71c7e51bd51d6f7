#!/usr/bin/env python3
"""A scripted OpenAI-compatible model that answers through tool calls (for the
acceptance scenarios' ``run.sh``).

Usage: ``fake_llm.py PORT LOGFILE``. ``POST /v1/chat/completions`` (JSON, or SSE when
``"stream": true``); every request body is appended to LOGFILE as one JSON line.

The script, decided by the conversation, not by chance:

* the last user message is ``plan [[TOOL, {arguments}], ...]``: call the plan's tools
  one after the other, one per answer (the next after each tool result), then reply
  ``RESULTS: <the tool results as a JSON list>``;
* the last message is a user message ``use TOOL {json arguments}`` and a tool whose
  function name is TOOL was offered: reply with one call of that tool;
* the last message is a tool result: reply ``TOOL RESULT: <the result text>``;
* anything else: reply ``NO TOOL: <the list of offered tool names>``.

So a pipeline reply proves which tools the host called and what they answered.
"""

from __future__ import annotations

import json
import re
import sys
import time
from typing import Any

from aiohttp import web

PORT = int(sys.argv[1])
LOG = open(sys.argv[2], "a", buffering=1)  # noqa: SIM115 - kept open for the server's life
USE = re.compile(r"^use (\S+) (\{.*\})\s*$", re.S)
PLAN = re.compile(r"^plan (\[.*\])\s*$", re.S)


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def call_of(name: str, arguments: str) -> dict[str, Any]:
    call = {
        "id": f"call-{int(time.time() * 1000)}",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }
    return {"content": "", "tool_calls": [call]}


def follow_plan(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The next step of the last user message's plan, or ``None`` without a plan."""
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if not users or not (match := PLAN.match(text_of(messages[users[-1]]))):
        return None
    plan = json.loads(match.group(1))
    results = [text_of(m) for m in messages[users[-1] + 1 :] if m.get("role") == "tool"]
    if len(results) < len(plan):
        name, arguments = plan[len(results)]
        return call_of(name, json.dumps(arguments))
    return {"content": "RESULTS: " + json.dumps(results)}


def decide(body: dict[str, Any]) -> dict[str, Any]:
    messages = body.get("messages") or []
    offered = [t.get("function", {}).get("name", "") for t in body.get("tools") or []]
    planned = follow_plan(messages)
    if planned is not None:
        return planned
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        return {"content": "TOOL RESULT: " + text_of(last)}
    match = USE.match(text_of(last)) if last.get("role") == "user" else None
    if match and match.group(1) in offered:
        return call_of(match.group(1), match.group(2))
    return {"content": "NO TOOL: " + ",".join(sorted(offered))}


async def chat(request: web.Request) -> web.StreamResponse:
    body = await request.json()
    LOG.write(json.dumps({"t": time.time(), "body": body}) + "\n")
    reply = decide(body)
    model = body.get("model", "fake-model")
    finish = "tool_calls" if reply.get("tool_calls") else "stop"
    usage = {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}
    base = {"id": "chatcmpl-fake", "created": int(time.time()), "model": model}
    if not body.get("stream"):
        message = {"role": "assistant", **reply}
        return web.json_response(
            {
                **base,
                "object": "chat.completion",
                "choices": [{"index": 0, "finish_reason": finish, "message": message}],
                "usage": usage,
            }
        )
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)

    async def send(delta: dict[str, Any], finish_reason: str | None = None) -> None:
        chunk = {
            **base,
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }
        if finish_reason:
            chunk["usage"] = usage
        await response.write(f"data: {json.dumps(chunk)}\n\n".encode())

    await send({"role": "assistant", "content": ""})
    if reply.get("tool_calls"):
        calls = [{"index": 0, **reply["tool_calls"][0]}]
        await send({"tool_calls": calls})
    text = reply.get("content", "")
    for start in range(0, len(text), 16):
        await send({"content": text[start : start + 16]})
    await send({}, finish)
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


async def models(request: web.Request) -> web.Response:
    del request
    listing = [{"id": "fake-model", "object": "model", "created": 0, "owned_by": "fake"}]
    return web.json_response({"object": "list", "data": listing})


app = web.Application()
for prefix in ("", "/v1"):
    app.router.add_get(prefix + "/models", models)
    app.router.add_post(prefix + "/chat/completions", chat)
web.run_app(app, host="127.0.0.1", port=PORT, print=None)
