"""``install_plugin`` from the marketplace under a real ``lbp rt``, against a local HTTP
server that serves packages the way the marketplace does (a download URL per author,
name and version, answered with a redirect to the file)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from aiohttp import web

from langbot_plugin.host import LocalHost, PluginRuntimeClient
from langbot_plugin.protocol import control_link as ctl
from langbot_plugin.rpc import RPCError
from tests.compat.runtimes import PLUGINS
from tests.e2e.processes import WORKSPACE, lbp_rt
from tests.support.http import serving_app
from tests.support.pypi import package
from tests.support.slot_plugins import write_slot_plugin

pytestmark = pytest.mark.anyio

DOWNLOAD = "/api/v1/marketplace/plugins/download/{author}/{name}/{version}"


@contextlib.asynccontextmanager
async def marketplace(packages: dict[tuple[str, str, str], bytes]) -> AsyncGenerator[str]:
    """Serve ``packages`` by (author, name, version); yields the base URL."""

    async def download(request: web.Request) -> web.StreamResponse:
        key = (
            request.match_info["author"],
            request.match_info["name"],
            request.match_info["version"],
        )
        if key not in packages:
            return web.json_response({"code": -1, "msg": "not found"}, status=404)
        raise web.HTTPFound(f"/files/{quote('-'.join(key))}.lbpkg")

    async def file(request: web.Request) -> web.Response:
        author, name, version = request.match_info["file"].removesuffix(".lbpkg").split("-")
        return web.Response(body=packages[(author, name, version)])

    app = web.Application()
    app.router.add_get(DOWNLOAD, download)
    app.router.add_get("/files/{file}", file)
    async with serving_app(app) as url:
        yield url


async def install(host: PluginRuntimeClient, **info: str) -> list[dict[str, Any]]:
    params = {"install_source": "marketplace", "install_info": info}
    context = host.workspace.as_context()
    return [
        item.model_dump()
        async for item in ctl.INSTALL_PLUGIN.iterate(host.session, params, context=context)
    ]


async def test_a_marketplace_package_is_downloaded_verified_and_served(tmp_path: Path) -> None:
    big = {"assets/padding.bin": os.urandom(2 << 20)}  # 2 MiB: progress items
    alpha = package(write_slot_plugin(tmp_path, "alpha"), big)
    beta = package(write_slot_plugin(tmp_path, "beta"))
    served = {("tester", "alpha", "1.0.0"): alpha, ("tester", "beta", "2.0.0"): beta}
    async with (
        marketplace(served) as url,
        lbp_rt(tmp_path) as runtime,
        PluginRuntimeClient.connect(
            runtime.control_url, LocalHost(), workspace=WORKSPACE, handshake=False
        ) as host,
    ):
        await host.handshake(host.runtime_config(cloud_service_url=url))
        steps = await install(
            host, plugin_author="tester", plugin_name="alpha", plugin_version="1.0.0"
        )
        assert steps[-1]["current_action"] == "plugin installed"
        progress = [s["metadata"] for s in steps if s.get("metadata")]
        assert progress
        assert progress[-1]["download_current"] == len(alpha)
        assert (await host.call_tool("whoami", {}))["tag"] == "alpha"

        # the package must be the plugin that was asked for (beta's manifest says 1.0.0)
        with pytest.raises(RPCError, match=r"not the tester/beta '2\.0\.0'"):
            await install(host, plugin_author="tester", plugin_name="beta", plugin_version="2.0.0")
        with pytest.raises(RPCError, match="HTTP 404") as missing:
            await install(host, plugin_author="tester", plugin_name="gamma", plugin_version="1.0")
        # the host side does not import the runtime's error classes: the code travels
        assert getattr(missing.value, "remote_code", missing.value.code) == "marketplace_failed"
        with pytest.raises(RPCError) as hostile:
            await install(host, plugin_author="tester", plugin_name="..", plugin_version="1.0")
        assert hostile.value.code == "invalid_params"
        unknown = {"install_source": "ftp", "install_info": {}}
        with pytest.raises(RPCError, match="not one of local, github, marketplace") as refused:
            async for _ in ctl.INSTALL_PLUGIN.iterate(
                host.session, unknown, context=host.workspace.as_context()
            ):
                pass
        assert refused.value.code == "not_supported"
        assert [p.identity for p in await host.list_plugins()] == ["tester/alpha"]


async def test_an_author_with_a_space_is_downloaded_and_installed(tmp_path: Path) -> None:
    """The reference accepts ``LangBot Developer``; its download URL is quoted."""
    served = {("LangBot Developer", "waifu_bot", "0.2.0"): package(PLUGINS / "spaced")}
    async with (
        marketplace(served) as url,
        lbp_rt(tmp_path) as runtime,
        PluginRuntimeClient.connect(
            runtime.control_url, LocalHost(), workspace=WORKSPACE, handshake=False
        ) as host,
    ):
        await host.handshake(host.runtime_config(cloud_service_url=url))
        steps = await install(
            host,
            plugin_author="LangBot Developer",
            plugin_name="waifu_bot",
            plugin_version="0.2.0",
        )
        assert steps[-1]["current_action"] == "plugin installed"
        assert [p.identity for p in await host.list_plugins()] == ["LangBot Developer/waifu_bot"]
        with pytest.raises(RPCError) as hostile:
            await install(host, plugin_author="a/b", plugin_name="x", plugin_version="1.0")
        assert hostile.value.code == "invalid_params"
