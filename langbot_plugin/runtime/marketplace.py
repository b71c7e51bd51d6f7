"""Downloading a plugin package from the LangBot marketplace.

``install_plugin`` from ``marketplace`` names a plugin by author, name and version; the
package is ``GET {cloud_service_url}/api/v1/marketplace/plugins/download/{author}/
{name}/{version}`` (the URL the host sent, else ``$CLOUD_SERVICE_URL``, else the
reference's default), at most 64 MiB, installed like any package. A package that is
not the plugin asked for is refused.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from langbot_plugin.protocol.identities import identity_problem
from langbot_plugin.rpc.errors import InvalidParamsError, RPCError

__all__ = [
    "DEFAULT_CLOUD_SERVICE_URL",
    "MAX_PACKAGE_BYTES",
    "Download",
    "MarketplaceError",
    "PluginRef",
    "cloud_service_url",
    "download_package",
]

DEFAULT_CLOUD_SERVICE_URL = "https://space.langbot.app"
MAX_PACKAGE_BYTES = 64 * 1024 * 1024
_PROGRESS_EVERY = 1024 * 1024
_VERSION = re.compile(r"^[A-Za-z0-9_.+-]{1,128}$")


class MarketplaceError(RPCError):
    """The marketplace could not be reached or did not answer with a package."""

    code = "marketplace_failed"


@dataclass(frozen=True, slots=True)
class PluginRef:
    author: str
    name: str
    version: str

    @classmethod
    def from_install_info(cls, info: dict[str, Any]) -> PluginRef:
        """The plugin named by ``install_info``: author and name as any plugin's
        (:func:`~langbot_plugin.protocol.identities.identity_problem`), a plain version."""
        author, name = (info.get(key) for key in ("plugin_author", "plugin_name"))
        for key, value in (("plugin_author", author), ("plugin_name", name)):
            if reason := identity_problem(value):
                raise InvalidParamsError(f"install_info.{key} {value!r} {reason}")
        version = info.get("plugin_version")
        if not isinstance(version, str) or not _VERSION.match(version) or version in (".", ".."):
            raise InvalidParamsError(
                f"install_info.plugin_version must be 1-128 of [A-Za-z0-9_.+-], not {version!r}"
            )
        return cls(str(author), str(name), version)

    @property
    def identity(self) -> str:
        return f"{self.author}/{self.name}"


@dataclass(frozen=True, slots=True)
class Download:
    """Progress of a download (``content`` is set on the last one)."""

    downloaded: int
    total: int
    speed: float
    content: bytes | None = None

    def metadata(self) -> dict[str, Any]:
        return {
            "download_current": self.downloaded,
            "download_total": self.total,
            "download_speed": self.speed,
        }


def cloud_service_url(from_host: str | None) -> str:
    """The marketplace's base URL: the host's, the environment's, or the default."""
    chosen = (from_host or os.environ.get("CLOUD_SERVICE_URL") or "").strip()
    return (chosen or DEFAULT_CLOUD_SERVICE_URL).rstrip("/")


async def download_package(
    base_url: str, ref: PluginRef, *, limit: int = MAX_PACKAGE_BYTES, timeout: float = 60.0
) -> AsyncIterator[Download]:
    """Stream the package, yielding progress about every MiB and the bytes at the end."""
    import aiohttp

    path = "/".join(quote(part, safe="") for part in (ref.author, ref.name, ref.version))
    url = f"{base_url}/api/v1/marketplace/plugins/download/{path}"
    started = time.monotonic()
    body = bytearray()
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as client,
            client.get(url, allow_redirects=True) as response,
        ):
            if response.status != 200:
                raise MarketplaceError(
                    f"the marketplace answered HTTP {response.status} for {ref.identity} "
                    f"{ref.version} ({url})",
                    details={"status": response.status, "url": url},
                )
            total = response.content_length or 0
            if total > limit:
                raise MarketplaceError(f"the package of {ref.identity} exceeds {limit} bytes")
            reported = 0
            async for chunk in response.content.iter_chunked(64 * 1024):
                body.extend(chunk)
                if len(body) > limit:
                    raise MarketplaceError(f"the package of {ref.identity} exceeds {limit} bytes")
                if len(body) - reported >= _PROGRESS_EVERY:
                    reported = len(body)
                    yield Download(reported, total, reported / _elapsed(started))
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise MarketplaceError(
            f"cannot download {ref.identity} {ref.version} from {url}: {type(exc).__name__}: {exc}",
            details={"url": url},
        ) from None
    size = len(body)
    yield Download(size, total or size, size / _elapsed(started), bytes(body))


def _elapsed(started: float) -> float:
    return max(time.monotonic() - started, 1e-9)
