"""A fake OpenAI-compatible endpoint on 127.0.0.1: it streams a scripted answer as
server-sent events, the way ``/v1/chat/completions`` does with ``stream: true``, and
keeps every request it got."""

import json
import socket
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class FakeOpenAI:
    answer: str = "Hello from the fake model."
    status: int = 200
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    base_url: str = ""

    async def completions(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(await request.json())
        self.headers.append(dict(request.headers))
        if self.status != 200:
            return web.json_response({"error": {"message": "quota exceeded"}}, status=self.status)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        words = self.answer.split(" ")
        for index, word in enumerate(words):
            piece = word if index == 0 else " " + word
            chunk = {"choices": [{"index": 0, "delta": {"content": piece}}]}
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        usage = {
            "prompt_tokens": 7,
            "completion_tokens": len(words),
            "total_tokens": 7 + len(words),
        }
        await response.write(f"data: {json.dumps({'choices': [], 'usage': usage})}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        return response


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def fake_openai(**options: Any) -> AsyncGenerator[FakeOpenAI]:
    fake = FakeOpenAI(**options)
    app = web.Application()
    app.router.add_post("/v1/chat/completions", fake.completions)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    fake.base_url = f"http://127.0.0.1:{port}/v1"
    try:
        yield fake
    finally:
        await runner.cleanup()
