"""``lbp dev --web``: the session as a page on 127.0.0.1 (aiohttp, plain HTML/JS, no CDN).

Routes:

- ``GET /`` the page; ``GET /static/<file>`` its script and style (package data of
  ``langbot_plugin/dev/static``; no build step).
- ``GET /api/v1/plugins/_sdk/page-sdk.js``: the page SDK
  (:mod:`langbot_plugin.assets`), where LangBot serves it to plugin pages.
- ``GET /pages/<id>/``: a preview of the plugin's page ``<id>``: its HTML in a frame,
  with LangBot's part played around it (theme and language, and each ``langbot.api``
  call relayed to ``POST /api/pages/<id>``, the plugin's ``handle_api``);
  ``GET /pages/<id>/files/<path>`` serves the files of the page's folder.
- ``GET /api/session``: the plugin, its runners, tools, commands and pages, the
  conversation.
- ``GET /api/events``: a WebSocket; it sends the recent events, then each event as
  it happens (``DevEvent.to_json``).
- ``POST /api/input`` with ``{"line": "..."}``: one input line, as typed in the
  terminal (a message, ``!command``, ``/tool``, ``/event``, ``/reset``); answers
  ``{"ok": bool, "error": str | null, "shown": bool, "help": bool}`` when it is done
  (``shown``: the failure was also an event the page shows).

The server binds 127.0.0.1 only and answers only requests whose ``Host`` is this
address (a page from another site cannot reach it through DNS rebinding), and takes
input and WebSocket connections only from its own origin.
"""

from __future__ import annotations

import errno
import json
import mimetypes
import os
import posixpath
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import PurePosixPath
from typing import Any, cast
from urllib.parse import quote

import anyio
from aiohttp import WSMsgType, web

from langbot_plugin.assets import PAGE_SDK_ROUTE, page_sdk_script
from langbot_plugin.dev.events import DevEvent
from langbot_plugin.dev.inputs import handle_line
from langbot_plugin.dev.session import DevError, DevSession
from langbot_plugin.rpc import RPCError

__all__ = ["DevWeb", "WebBindError"]

STATIC = {
    "app.js": "text/javascript",
    "style.css": "text/css",
}
#: How long a browser may take to accept one event before it is disconnected.
SEND_SECONDS = 5.0


class WebBindError(Exception):
    """The page's port cannot be bound; ``usage`` when the address is wrong."""

    def __init__(self, message: str, usage: bool = False) -> None:
        super().__init__(message)
        self.usage = usage


def _asset(name: str) -> bytes:
    return resources.files("langbot_plugin.dev").joinpath("static", name).read_bytes()


class DevWeb:
    """Serves one :class:`DevSession` (see the module docstring)."""

    def __init__(self, session: DevSession, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.session = session
        self.host = host
        self.port = port
        self.app = web.Application(middlewares=[self._same_origin])
        self.app.router.add_get("/", self._index)
        self.app.router.add_get("/static/{name}", self._static)
        self.app.router.add_get(PAGE_SDK_ROUTE, self._page_sdk)
        self.app.router.add_get("/pages/{page_id}/", self._page)
        self.app.router.add_get("/pages/{page_id}/files/{path:.+}", self._page_file)
        self.app.router.add_post("/api/pages/{page_id}", self._page_api)
        self.app.router.add_get("/api/session", self._info)
        self.app.router.add_get("/api/events", self._events)
        self.app.router.add_post("/api/input", self._input)
        self._busy = anyio.Lock()

    @asynccontextmanager
    async def serving(self) -> AsyncGenerator[str]:
        """Serve until the block ends; yields the page's URL."""
        runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
        await runner.setup()
        try:
            site = web.TCPSite(runner, self.host, self.port)
            try:
                await site.start()
            except OSError as exc:
                taken = exc.errno == errno.EADDRINUSE
                hint = "; choose another with --port" if taken else ""
                reason = os.strerror(exc.errno).lower() if exc.errno else str(exc)
                raise WebBindError(
                    f"cannot serve the page on {self.host}:{self.port}: {reason}{hint}"
                ) from None
            server = site._server  # pyright: ignore[reportPrivateUsage]
            sockets = getattr(server, "sockets", None) or []
            self.port = int(sockets[0].getsockname()[1]) if sockets else self.port
            yield f"http://{self.host}:{self.port}/"
        finally:
            with anyio.CancelScope(shield=True):
                await runner.cleanup()

    # ------------------------------------------------------------------ checks

    def _allowed_hosts(self) -> set[str]:
        return {f"{self.host}:{self.port}", f"localhost:{self.port}"}

    @web.middleware
    async def _same_origin(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if request.host not in self._allowed_hosts():
            return web.Response(status=403, text="this page answers on 127.0.0.1 only\n")
        origin = request.headers.get("Origin")
        writes = request.method != "GET" or request.path == "/api/events"
        if writes and origin is not None and origin != f"http://{request.host}":
            return web.Response(status=403, text="cross-origin requests are refused\n")
        response: web.StreamResponse = await handler(request)
        return response

    # ------------------------------------------------------------------ pages

    async def _index(self, request: web.Request) -> web.Response:
        return web.Response(body=_asset("index.html"), content_type="text/html", charset="utf-8")

    async def _static(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in STATIC:
            raise web.HTTPNotFound()
        return web.Response(body=_asset(name), content_type=STATIC[name], charset="utf-8")

    async def _page_sdk(self, request: web.Request) -> web.Response:
        return web.Response(
            body=page_sdk_script(), content_type="application/javascript", charset="utf-8"
        )

    # ------------------------------------------------------------------ the plugin's pages

    def _page_entry(self, request: web.Request) -> dict[str, Any]:
        page_id = request.match_info["page_id"]
        entry = next((p for p in self.session.pages if p.get("id") == page_id), None)
        if entry is None:
            raise web.HTTPNotFound(text=f"the plugin has no page {page_id!r}\n")
        return entry

    async def _page(self, request: web.Request) -> web.Response:
        """The page in a frame, with LangBot's part played around it (static/page.html)."""
        entry = self._page_entry(request)
        name = posixpath.basename(str(entry["path"]))
        source = {"id": entry["id"], "src": f"/pages/{quote(str(entry['id']))}/files/{name}"}
        html = _asset("page.html").decode("utf-8").replace("/*PAGE*/null", json.dumps(source))
        return web.Response(text=html, content_type="text/html", charset="utf-8")

    async def _page_file(self, request: web.Request) -> web.Response:
        """A file of the page's folder (its HTML, scripts, i18n), as LangBot serves it."""
        entry = self._page_entry(request)
        root = self.session.root
        folder = (root / posixpath.dirname(str(entry["path"]))).resolve()
        wanted = PurePosixPath(request.match_info["path"])
        path = (folder / wanted).resolve()
        inside = path.is_relative_to(folder) and path.is_relative_to(root)
        if ".." in wanted.parts or not inside or not path.is_file():
            raise web.HTTPNotFound()
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        return web.Response(body=await anyio.Path(path).read_bytes(), content_type=kind)

    async def _page_api(self, request: web.Request) -> web.Response:
        """A ``langbot.api`` call of the page, to the plugin's ``handle_api``."""
        entry = self._page_entry(request)
        try:
            body = await request.json()
        except ValueError:
            return web.json_response({"error": "the body is not JSON"}, status=400)
        if not isinstance(body, dict) or not isinstance(body.get("endpoint"), str):
            return web.json_response({"error": 'expected {"endpoint": ...}'}, status=400)
        asked = cast(dict[str, Any], body)
        try:
            answer = await self.session.page_api(
                str(entry["id"]),
                asked["endpoint"],
                str(asked.get("method") or "POST"),
                asked.get("body"),
            )
        except (RPCError, DevError) as exc:
            return web.json_response({"error": str(exc)})
        return web.json_response(answer)

    async def _info(self, request: web.Request) -> web.Response:
        return web.json_response(self.session.describe())

    # ------------------------------------------------------------------ live events

    async def _events(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(heartbeat=30)
        await ws.prepare(request)
        queue: list[DevEvent] = list(self.session.events.recent)  # then what comes meanwhile
        caught_up = False

        async def send(event: DevEvent) -> None:
            if ws.closed:
                return
            if not caught_up:
                queue.append(event)
                return
            with anyio.move_on_after(SEND_SECONDS) as waited:
                await ws.send_str(event.to_json())
            if waited.cancelled_caught:
                await ws.close()

        unsubscribe = self.session.events.subscribe(send)
        try:
            await ws.send_json({"kind": "session", "data": self.session.describe()})
            while queue:
                await ws.send_str(queue.pop(0).to_json())
            caught_up = True
            async for message in ws:
                if message.type in (WSMsgType.ERROR, WSMsgType.CLOSE):
                    break
        finally:
            unsubscribe()
        return ws

    # ------------------------------------------------------------------ input

    async def _input(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except ValueError:
            return web.json_response({"ok": False, "error": "the body is not JSON"}, status=400)
        line = body.get("line") if isinstance(body, dict) else None
        if not isinstance(line, str):
            return web.json_response({"ok": False, "error": 'expected {"line": TEXT}'}, status=400)
        async with self._busy:  # one line at a time, as in the terminal
            result = await handle_line(self.session, line)
        if result.quit:
            return web.json_response({"ok": False, "error": "/quit works in the terminal only"})
        return web.json_response(
            {"ok": result.ok, "error": result.error, "shown": result.shown, "help": result.help}
        )
