"""``lbp dev --web`` in a real browser (Debian's headless Chromium, driven by Playwright),
and the page's HTTP surface with a plain client.

The browser test types a message, sees the reply stream into the chat (the bot
bubble's text is recorded at every change) and the tool call in the timeline, sees a
broken save reported, and keeps a screenshot in ``.artifacts/dev-web.png`` (a
gitignored folder at the top of the checkout). Without Chromium or Playwright it is
skipped, unless ``LBP_REQUIRE_BROWSER=1`` (set by ``.ci/run``) makes that a failure.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest

from langbot_plugin.dev import DevSession
from langbot_plugin.dev.models import scripted_model
from langbot_plugin.dev.web import DevWeb
from tests.dev.helpers import ADD_SCRIPT, toolbox

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

ARTIFACTS = Path(__file__).resolve().parents[2] / ".artifacts"
ANSWER = "The sum is 42, as the add tool says."


def chromium() -> str:
    """The system Chromium; skip (or fail under LBP_REQUIRE_BROWSER=1) without one."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    reason = None if found else "no chromium on PATH (apt-get install -y chromium)"
    try:
        import playwright.async_api  # noqa: F401  # pyright: ignore[reportUnusedImport]
    except ImportError:
        reason = "the playwright package is not installed (pip install -e '.[dev]')"
    if reason is not None:
        if os.environ.get("LBP_REQUIRE_BROWSER") == "1":
            pytest.fail(f"LBP_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    assert found is not None
    return found


@asynccontextmanager
async def served(tmp_path: Path) -> AsyncGenerator[tuple[DevSession, str]]:
    plugin = toolbox(tmp_path)
    model = scripted_model(ADD_SCRIPT, chunk_chars=6)
    async with DevSession(plugin, model=model) as session, DevWeb(session).serving() as url:
        yield session, url


async def test_the_page_streams_a_reply_and_shows_the_tool_call(tmp_path: Path) -> None:
    executable = chromium()
    from playwright.async_api import async_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    async with served(tmp_path) as (session, url), async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=executable, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 800})
            # Record every text the bot bubble shows: a streamed reply shows several.
            await page.add_init_script(
                """
                window.botTexts = [];
                new MutationObserver(() => {
                  const bot = document.querySelector('#chat .msg.bot');
                  if (bot && bot.textContent !== window.botTexts.at(-1)) {
                    window.botTexts.push(bot.textContent);
                  }
                }).observe(document, {subtree: true, childList: true, characterData: true});
                """
            )
            await page.goto(url)
            await page.wait_for_selector("#timeline li[data-kind='plugin.ready']")
            assert await page.text_content("#identity") == "thirdparty/toolbox"
            await page.fill("#input", "what is 2 + 40?")
            await page.click("#send")

            bot = page.locator("#chat .msg.bot").first
            await bot.wait_for()
            await page.wait_for_function(
                "text => document.querySelector('#chat .msg.bot').textContent === text", arg=ANSWER
            )
            texts: list[str] = await page.evaluate("window.botTexts")
            assert len(texts) >= 3, texts  # the answer arrived in pieces
            assert all(ANSWER.startswith(t) for t in texts), texts
            assert texts[-1] == ANSWER

            started = page.locator("#timeline li[data-kind='tool.call.started']")
            await started.wait_for()
            assert 'add({"a":2,"b":40})' in (await started.text_content() or "")
            completed = page.locator("#timeline li[data-kind='tool.call.completed']")
            assert '{"sum":42}' in (await completed.text_content() or "")
            assert await page.locator("#timeline li[data-kind='message.delta']").count() >= 3
            state = page.locator("#timeline li[data-kind='state.updated']")
            assert "conversation.turns = 1" in (await state.text_content() or "")
            ended = page.locator("#timeline li[data-kind='run.ended']")
            await ended.wait_for()
            assert "completed" in (await ended.text_content() or "")
            assert await page.locator("#logs li").count() >= 1  # the plugin's log lines

            # A broken save is reported in the page; the plugin keeps serving.
            tool = session.root / "components" / "tools" / "add.py"
            await anyio.Path(tool).write_text("def broken(:\n")
            error = page.locator("#chat .msg.error")
            await error.wait_for(timeout=60_000)
            assert "cannot be loaded" in (await error.text_content() or "")
            assert await page.text_content("#status") == "broken save"

            await page.screenshot(path=str(ARTIFACTS / "dev-web.png"), full_page=True)
        finally:
            await browser.close()
    assert (ARTIFACTS / "dev-web.png").stat().st_size > 10_000


async def test_the_page_answers_its_own_origin_only(tmp_path: Path) -> None:
    async with served(tmp_path) as (session, url), aiohttp.ClientSession() as http:
        async with http.get(url + "api/session") as response:
            assert response.status == 200
            info = await response.json()
        assert info["identity"] == "thirdparty/toolbox"
        assert info["runners"] == ["agent"]
        assert info["tools"] == ["add"]

        async with http.get(url, headers={"Host": "evil.example:80"}) as response:
            assert response.status == 403
        origin = {"Origin": "http://evil.example"}
        async with http.post(url + "api/input", json={"line": "hi"}, headers=origin) as response:
            assert response.status == 403
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(url + "api/events", headers=origin)
        assert refused.value.status == 403
        async with http.ws_connect(url + "api/events") as ws:  # its own origin: the events
            first = await ws.receive_json(timeout=30)
            assert first["kind"] == "session"
            assert first["data"]["identity"] == "thirdparty/toolbox"
        async with http.post(url + "api/input", data=b"{") as response:
            assert response.status == 400
        async with http.post(url + "api/input", json={"text": "hi"}) as response:
            assert response.status == 400
        async with http.get(url + "static/../session.py") as response:
            assert response.status == 404

        async with http.post(url + "api/input", json={"line": "!hello web"}) as response:
            assert await response.json() == {
                "ok": True,
                "error": None,
                "shown": False,
                "help": False,
            }
        async with http.post(url + "api/input", json={"line": "/nope"}) as response:
            answer = await response.json()
        assert answer["ok"] is False
        assert "unknown /nope" in answer["error"]
    replies = [e.data["text"] for e in session.events.recent if e.kind == "command.reply"]
    assert replies == ["hello, web!"]


PING_LISTENER = """\
from langbot_plugin.api.definition.components.common.event_listener import EventListener
from langbot_plugin.api.entities import events
from langbot_plugin.api.entities.builtin.platform.message import MessageChain, Plain
from langbot_plugin.api.entities.context import EventContext


class Watch(EventListener):
    def __init__(self) -> None:
        super().__init__()

        @self.handler(events.PersonNormalMessageReceived)
        async def on_message(ctx: EventContext) -> None:
            if str(ctx.event.text_message) == "ping":
                await ctx.reply(MessageChain([Plain(text="pong")]))
                ctx.prevent_default()
"""


@asynccontextmanager
async def browser() -> AsyncGenerator[Any]:
    executable = chromium()
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        launched = await pw.chromium.launch(
            executable_path=executable, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            yield await launched.new_page(viewport={"width": 1280, "height": 800})
        finally:
            await launched.close()


async def test_the_chat_shows_every_input_replies_and_failures_and_survives_a_reload(
    tmp_path: Path,
) -> None:
    """Listener replies, a bubble for /tool and /event, a failure with the plugin's file
    and line, and a page reload that keeps the user's own messages."""
    from playwright.async_api import expect

    plugin = toolbox(tmp_path)
    (plugin / "components" / "event_listener" / "watch.py").write_text(PING_LISTENER)
    async with DevSession(plugin) as session, DevWeb(session).serving() as url, browser() as page:
        await page.goto(url)
        await page.wait_for_selector("#timeline li[data-kind='plugin.ready']")
        lines = [
            '/tool add {"a": 1, "b": 2}',
            '/event PersonNormalMessageReceived {"text_message": "ping"}',
            "!hello web",
            '/tool add {"a": 1}',
        ]
        for line in lines:
            await page.fill("#input", line)
            await page.click("#send")
            await expect(page.locator("#chat .msg.user")).to_have_count(lines.index(line) + 1)
        failure = page.locator("#chat .msg.error").first
        await expect(failure).to_contain_text("tool add raised at components/tools/add.py:9")
        trace = await failure.locator("pre.trace").text_content() or ""
        assert 'File "components/tools/add.py", line 9, in call' in trace
        assert "KeyError: 'b'" in trace
        bots = page.locator("#chat .msg.bot")
        await expect(bots).to_have_text(['{\n  "sum": 3\n}', "pong", "hello, web!"])
        await expect(page.locator("#chat .msg.user")).to_have_text(lines)
        event = page.locator("#timeline li[data-kind='event.reply']")
        await expect(event).to_contain_text("PersonNormalMessageReceived → pong")

        await page.reload()
        await page.wait_for_selector("#timeline li[data-kind='plugin.ready']")
        await expect(page.locator("#chat .msg.user")).to_have_text(lines)
        await expect(bots).to_have_text(['{\n  "sum": 3\n}', "pong", "hello, web!"])
        await expect(page.locator("#chat .msg.error")).to_have_count(1)
        ARTIFACTS.mkdir(exist_ok=True)
        await page.screenshot(path=str(ARTIFACTS / "dev-web-inputs.png"), full_page=True)


NOTES = Path(__file__).resolve().parents[2] / "examples" / "notes_page"


async def test_a_plugin_page_is_previewed_and_talks_to_its_handle_api(tmp_path: Path) -> None:
    from playwright.async_api import expect

    plugin = tmp_path / "notes_page"
    shutil.copytree(NOTES, plugin, ignore=shutil.ignore_patterns("__pycache__", ".lbp-dev"))
    async with DevSession(plugin) as session, DevWeb(session).serving() as url, browser() as page:
        await page.goto(url)
        link = page.locator("#pages a[data-page='notes']")
        await expect(link).to_have_attribute("href", "/pages/notes/")
        await page.goto(url + "pages/notes/")
        frame = page.frame_locator("#page")
        await expect(frame.locator("html")).to_have_attribute("data-theme", "light")
        await frame.locator("#text").fill("restart at 9")
        await frame.locator("#add button").click()
        await expect(frame.locator("#notes li")).to_have_text(["restart at 9"])
        await frame.locator("#add button").click()  # an empty note: the plugin refuses
        await expect(frame.locator("#error")).to_have_text("error: Error: a note needs some text")
        await page.select_option("#theme", "dark")
        await expect(frame.locator("html")).to_have_attribute("data-theme", "dark")
        relayed = await page.evaluate("window.relayed")
        assert relayed == [["GET", "/notes"], ["POST", "/notes"], ["POST", "/notes"]]
        await page.screenshot(path=str(ARTIFACTS / "dev-web-page.png"), full_page=True)
    # the timeline names what the plugin called, not the runtime's storage actions
    host_calls = [e.data for e in session.events.recent if e.kind == "host.call"]
    assert {"action": "set_plugin_storage", "key": "notes"} in host_calls
    assert not [c for c in host_calls if "binary" in c["action"]], host_calls
    calls = [e.data for e in session.events.recent if e.kind == "page.call"]
    assert [c["answer"] for c in calls][-1] == {"data": None, "error": "a note needs some text"}
    storage = session.host.storage
    assert storage.get(("plugin", "langbot-demo/notes_page", "notes")) == b'["restart at 9"]'


async def test_the_page_preview_serves_only_the_page_folder(tmp_path: Path) -> None:
    plugin = tmp_path / "notes_page"
    shutil.copytree(NOTES, plugin, ignore=shutil.ignore_patterns("__pycache__", ".lbp-dev"))
    async with (
        DevSession(plugin) as session,
        DevWeb(session).serving() as url,
        aiohttp.ClientSession() as http,
    ):
        async with http.get(url + "pages/notes/files/notes.html") as response:
            assert response.status == 200
            assert "langbot.api" in await response.text()
        for bad in (
            "pages/notes/files/..%2Fnotes.py",
            "pages/notes/files/../../manifest.yaml",
            "pages/nope/",
            "pages/notes/files/%2Fetc%2Fpasswd",
        ):
            async with http.get(url + bad) as response:
                assert response.status == 404, bad
        body = {"endpoint": "/notes", "method": "GET"}
        async with http.post(url + "api/pages/notes", json=body) as response:
            assert await response.json() == {"data": {"notes": []}, "error": None}
        evil = {"Origin": "http://evil.example"}
        async with http.post(url + "api/pages/notes", json=body, headers=evil) as response:
            assert response.status == 403
