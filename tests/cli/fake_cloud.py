"""A stand-in for the LangBot cloud service (space.langbot.app), served on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.conftest import free_port


@dataclass
class Upload:
    authorization: str
    file_name: str
    content: bytes
    changelog: str


@dataclass
class FakeCloud:
    """What the fake answers, and what it received. Tests change the answers freely."""

    url: str = ""
    pending_polls: int = 0
    expires_in: int = 600
    refresh_expires_in: Any = 3600
    generate_answer: dict[str, Any] | None = None
    token_get_answer: dict[str, Any] | None = None
    publish_status: int = 200
    publish_answer: Any = None
    publish_text: str | None = None
    polls: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    refreshes: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    uploads: list[Upload] = field(default_factory=list[Upload])

    async def generate(self, _request: web.Request) -> web.Response:
        return web.json_response(
            self.generate_answer
            or {
                "code": 0,
                "msg": "ok",
                "data": {
                    "device_code": "device-123",
                    "user_code": "WXYZ-0042",
                    "verification_uri": "/account/device?code=WXYZ-0042",
                    "expires_in": self.expires_in,
                    "interval": 0,
                },
            }
        )

    async def token_get(self, request: web.Request) -> web.Response:
        self.polls.append(await request.json())
        if self.token_get_answer is not None:
            return web.json_response(self.token_get_answer)
        if len(self.polls) <= self.pending_polls:
            return web.json_response({"code": 425, "msg": "authorization pending", "data": None})
        return web.json_response(
            {
                "code": 0,
                "msg": "ok",
                "data": {
                    "access_token": "access-1",
                    "refresh_token": "refresh-1",
                    "expires_in": 21600,
                    "token_type": "Bearer",
                },
            }
        )

    async def refresh(self, request: web.Request) -> web.Response:
        self.refreshes.append(await request.json())
        return web.json_response(
            {
                "code": 0,
                "msg": "ok",
                "data": {"access_token": "access-2", "expires_in": self.refresh_expires_in},
            }
        )

    async def publish(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form["file"]
        assert isinstance(upload, web.FileField)
        self.uploads.append(
            Upload(
                authorization=request.headers.get("Authorization", ""),
                file_name=upload.filename,
                content=upload.file.read(),
                changelog=str(form.get("changelog", "")),
            )
        )
        if self.publish_text is not None:
            return web.Response(status=self.publish_status, text=self.publish_text)
        answer = self.publish_answer or {
            "code": 0,
            "msg": "ok",
            "data": {"submission": {"status": "draft"}},
        }
        return web.json_response(answer, status=self.publish_status)


@asynccontextmanager
async def serve_fake_cloud() -> AsyncGenerator[FakeCloud]:
    cloud = FakeCloud()
    app = web.Application()
    app.router.add_post("/api/v1/accounts/token/generate", cloud.generate)
    app.router.add_post("/api/v1/accounts/token/get", cloud.token_get)
    app.router.add_post("/api/v1/accounts/token/refresh", cloud.refresh)
    app.router.add_post("/api/v1/marketplace/plugins/publish", cloud.publish)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    cloud.url = f"http://127.0.0.1:{port}"
    try:
        yield cloud
    finally:
        await runner.cleanup()
