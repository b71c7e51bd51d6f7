"""How the harness connects a plugin folder to a runtime and a local host.

Both ways give a :class:`Connection`: a :class:`PluginRuntimeClient` (the host's end,
serving a :class:`~langbot_plugin.host.LocalHost`), the scope calls are made in,
and, in memory, the plugin as loaded in this process.

* :func:`in_memory` -- everything in this process: the runtime's control connection
  and its plugin link, joined by in-memory transports; the plugin is loaded here, the
  way ``lbp run`` loads it, and registered as a debug plugin (the path ``lbp run``
  takes). A breakpoint in the plugin's code stops the test.
* :func:`child_process` -- a real ``lbp rt`` child spoken to over its stdio (as the
  released host starts it), the folder built into a package as ``lbp build`` builds
  it and installed, so the plugin runs in its own worker process.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from langbot_plugin.host import LocalHost, PluginRuntimeClient
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.rpc.processes import log_tail
from langbot_plugin.stack import (
    host_here,
    install_folder,
    plugin_here,
    runtime_here,
    start_runtime,
)
from langbot_plugin.testing.errors import HarnessError
from langbot_plugin.testing.loading import PluginModules, load_plugin_here
from langbot_plugin.worker.loader import LoadedPlugin

__all__ = ["Connection", "child_process", "in_memory"]


@dataclass
class Connection:
    """The host's client, the scope its calls use, and the plugin if it is loaded here."""

    client: PluginRuntimeClient
    scope: ActionScope | None
    loaded: LoadedPlugin | None = None
    log_file: Path | None = None


@asynccontextmanager
async def in_memory(root: Path, host: LocalHost, data_dir: Path) -> AsyncGenerator[Connection]:
    """The runtime and the plugin in this process (see the module docstring)."""
    from langbot_plugin.runtime.state import RuntimeOptions

    with PluginModules(root) as modules:
        loaded = load_plugin_here(root, modules)
        options = RuntimeOptions(data_dir=data_dir, debug_port=0, control_port=0)
        async with (
            runtime_here(options, serve=False) as runtime,
            host_here(runtime, host, name="harness-host") as client,
            plugin_here(runtime, client, loaded),
        ):
            yield Connection(client, None, loaded)


@asynccontextmanager
async def child_process(root: Path, host: LocalHost, workdir: Path) -> AsyncGenerator[Connection]:
    """A real ``lbp rt`` child with the folder installed as a package."""
    log_file = workdir / "lbp-rt.log"
    async with (
        start_runtime(data_dir=workdir / "rt-data", stdio=True, cwd=workdir, log=log_file) as rt,
        rt.host(host) as client,
    ):
        binding, result = await install_folder(client, root, workdir / "dist")
        if result.state != "running":
            tail = log_tail(log_file, 30, sep="\n")
            raise HarnessError(
                f"lbp rt did not start {root.name}: {result.error_code}: {result.message}\n{tail}"
            )
        yield Connection(client, binding, None, log_file)
