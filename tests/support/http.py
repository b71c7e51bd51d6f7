"""Serving an aiohttp app on a free loopback port for the length of a test."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from aiohttp import web

from tests.conftest import free_port

__all__ = ["serving_app"]


@asynccontextmanager
async def serving_app(app: web.Application) -> AsyncGenerator[str]:
    """``app`` served on 127.0.0.1; yields its base URL (``http://127.0.0.1:<port>``)."""
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()
