"""A plugin folder loaded into the test's own process, the way the worker loads it."""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from langbot_plugin.api.definition.importing import forget_modules
from langbot_plugin.protocol.containers import PluginSettings
from langbot_plugin.worker.loader import LoadedPlugin

__all__ = ["forget", "loaded_plugin"]


@asynccontextmanager
async def loaded_plugin(
    root: Path, config: dict[str, Any] | None = None
) -> AsyncGenerator[LoadedPlugin]:
    """The plugin initialized in this process; its modules are forgotten afterwards."""
    loaded = LoadedPlugin(root)
    try:
        await loaded.initialize(PluginSettings(plugin_config=config or {}), None)
        yield loaded
    finally:
        forget(root)


def forget(root: Path) -> None:
    """Drop the plugin's modules (namespace packages too) and path entry, so another
    plugin folder can load."""
    folder = root.resolve()
    forget_modules(folder)
    if str(folder) in sys.path:
        sys.path.remove(str(folder))
