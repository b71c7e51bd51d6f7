"""The page SDK (``langbot_plugin/assets/langbot-page-sdk.js``) in a real browser.

A local server plays LangBot: it serves the SDK at LangBot's route, a host page that
shows a plugin page in an iframe and relays the page's ``langbot.api`` calls to the
plugin (the example ``notes_page``, run by the test harness), and the plugin's page
files. Headless Chromium (Debian's, driven by Playwright) loads the unmodified
example page and a probe page that uses every part of the SDK.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from langbot_plugin.assets import PAGE_SDK_ROUTE, page_sdk_script
from langbot_plugin.testing import PluginHarness
from tests.dev.test_web import chromium, served
from tests.support.http import serving_app

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "notes_page"

HOST_PAGE = """<!DOCTYPE html>
<html><body>
<iframe id="page" src="/plugin/pages/{page}" width="800" height="500"></iframe>
<script>
  const frame = document.getElementById("page");
  window.relayed = [];
  window.setContext = (theme, language) =>
    frame.contentWindow.postMessage({type: "langbot:context", theme, language}, "*");
  frame.addEventListener("load", () => window.setContext("dark", "zh-Hans"));
  window.addEventListener("message", async (event) => {
    const asked = event.data;
    if (event.source !== frame.contentWindow || !asked || asked.type !== "langbot:api") return;
    window.relayed.push([asked.method, asked.endpoint]);
    const answer = await fetch("/bridge", {
      method: "POST",
      headers: {"content-type": "application/json"},
      body: JSON.stringify({endpoint: asked.endpoint, method: asked.method, body: asked.body}),
    }).then((r) => r.json());
    frame.contentWindow.postMessage(
      {type: "langbot:api:response", requestId: asked.requestId, ...answer}, "*");
  });
</script>
</body></html>
"""

PROBE_PAGE = """<!DOCTYPE html>
<html><body>
<h1 data-i18n="title">untranslated</h1>
<input id="hint" data-i18n="hint" data-i18n-attr="placeholder">
<p id="evil" data-i18n="evil" data-i18n-attr="onclick"></p>
<script src="/api/v1/plugins/_sdk/page-sdk.js"></script>
<script>
  window.seen = {themes: [], languages: []};
  langbot.onThemeChange((theme) => window.seen.themes.push(theme));
  langbot.onLanguageChange((language) =>
    window.seen.languages.push(language + "/" + langbot.t("title")));
  langbot.onReady((ctx) => {
    window.seen.ready = [ctx.theme, ctx.language, langbot.t("title"),
                         langbot.t("missing", "fallback"), langbot.t("missing"), langbot.ready];
  });
</script>
</body></html>
"""

TRANSLATIONS = {
    "zh_Hans": {"title": "笔记", "hint": "写点什么", "evil": "<img src=x onerror=alert(1)>"},
    "en_US": {"title": "Notes", "hint": "Write something"},
}


def page_files(tmp_path: Path) -> Path:
    """The example's page folder with a probe page and translations beside it."""
    folder = tmp_path / "pages"
    shutil.copytree(EXAMPLE / "components" / "pages", folder)
    (folder / "probe.html").write_text(PROBE_PAGE, encoding="utf-8")
    (folder / "i18n").mkdir()
    for locale, texts in TRANSLATIONS.items():
        (folder / "i18n" / f"{locale}.json").write_text(json.dumps(texts), encoding="utf-8")
    return folder


@asynccontextmanager
async def langbot_like(tmp_path: Path, harness: PluginHarness) -> AsyncGenerator[str]:
    """The server; yields its base URL."""
    pages = page_files(tmp_path)

    async def sdk(request: web.Request) -> web.Response:
        return web.Response(body=page_sdk_script(), content_type="application/javascript")

    async def host(request: web.Request) -> web.Response:
        page = request.query.get("page", "notes.html")
        return web.Response(text=HOST_PAGE.replace("{page}", page), content_type="text/html")

    async def bridge(request: web.Request) -> web.Response:
        asked: dict[str, Any] = await request.json()
        answer = await harness.page(
            "notes", asked["endpoint"], method=asked["method"], body=asked.get("body")
        )
        return web.json_response(answer.model_dump())

    app = web.Application()
    app.router.add_get(PAGE_SDK_ROUTE, sdk)
    app.router.add_get("/host.html", host)
    app.router.add_post("/bridge", bridge)
    app.router.add_static("/plugin/pages/", pages)
    async with serving_app(app) as url:
        yield url


@asynccontextmanager
async def browser_page() -> AsyncGenerator[Any]:
    executable = chromium()
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=executable, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            yield await browser.new_page()
        finally:
            await browser.close()


async def test_the_example_page_talks_to_its_plugin(tmp_path: Path) -> None:
    from playwright.async_api import expect

    async with (
        PluginHarness(EXAMPLE) as harness,
        langbot_like(tmp_path, harness) as url,
        browser_page() as page,
    ):
        await page.goto(f"{url}/host.html")
        frame = page.frame_locator("#page")
        await expect(frame.locator("html")).to_have_attribute("data-theme", "dark")
        await frame.locator("#text").fill("restart at 9")
        await frame.locator("#add button").click()
        await expect(frame.locator("#notes li")).to_have_text(["restart at 9"])
        await frame.locator("#add button").click()  # an empty note: the plugin refuses
        await expect(frame.locator("#error")).to_have_text("error: Error: a note needs some text")
        relayed = await page.evaluate("window.relayed")
        background = await frame.locator("html").evaluate(
            "el => el.style.getPropertyValue('--langbot-bg')"
        )
    assert relayed == [["GET", "/notes"], ["POST", "/notes"], ["POST", "/notes"]]
    assert harness.storage == {"notes": b'["restart at 9"]'}
    assert background == "#0a0a0a"


async def test_the_probe_page_gets_context_translations_and_ignores_strangers(
    tmp_path: Path,
) -> None:
    from playwright.async_api import expect

    async with (
        PluginHarness(EXAMPLE) as harness,
        langbot_like(tmp_path, harness) as url,
        browser_page() as page,
    ):
        await page.goto(f"{url}/host.html?page=probe.html")
        frame = page.frame_locator("#page")
        await expect(frame.locator("h1")).to_have_text("笔记")
        await expect(frame.locator("#hint")).to_have_attribute("placeholder", "写点什么")
        evil = frame.locator("#evil")
        await expect(evil).to_have_text("<img src=x onerror=alert(1)>")
        probe = page.frames[1]
        ready = await probe.evaluate("window.seen.ready")
        assert ready == ["dark", "zh-Hans", "笔记", "fallback", "missing", True]
        assert await evil.evaluate("el => [el.children.length, el.hasAttribute('onclick')]") == [
            0,
            False,
        ]
        # a message the page posts to itself is not LangBot's: only the parent's count
        await probe.evaluate(
            "window.postMessage({type: 'langbot:context', theme: 'dark', language: 'de-DE'}, '*')"
        )
        await page.evaluate("window.setContext('light', 'fr-FR')")  # no fr_FR.json: en_US
        await expect(frame.locator("h1")).to_have_text("Notes")
        await expect(frame.locator("html")).to_have_class("light")
        seen = await probe.evaluate("window.seen")
    assert seen["languages"] == ["fr-FR/Notes"]
    assert seen["themes"] == ["dark", "light"]


async def test_lbp_dev_serves_the_sdk_where_langbot_does(tmp_path: Path) -> None:
    async with (
        served(tmp_path) as (_, url),
        aiohttp.ClientSession() as http,
        http.get(url.rstrip("/") + PAGE_SDK_ROUTE) as answer,
    ):
        assert answer.status == 200
        assert answer.content_type == "application/javascript"
        assert await answer.read() == page_sdk_script()
    from langbot_plugin import assets

    # LangBot 4.11 reads the file next to the assets package's __init__
    assert (Path(assets.__file__).parent / "langbot-page-sdk.js").read_bytes() == page_sdk_script()
