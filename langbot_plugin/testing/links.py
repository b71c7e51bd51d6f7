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

import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio

from langbot_plugin.host import LocalHost, PluginRuntimeClient
from langbot_plugin.protocol import plugin_link as plug
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.rpc import RPCError, RPCSession
from langbot_plugin.rpc.processes import free_port, stop_process
from langbot_plugin.rpc.transport_memory import memory_pair
from langbot_plugin.rpc.transport_stdio import stdio_transport
from langbot_plugin.testing.errors import HarnessError
from langbot_plugin.testing.loading import PluginModules, load_plugin_here
from langbot_plugin.worker.debug_client import register_params
from langbot_plugin.worker.loader import LoadedPlugin

__all__ = ["Connection", "child_process", "in_memory"]

REGISTER_TIMEOUT = 60.0
STOP_SECONDS = 10.0


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
    from langbot_plugin.runtime.app import PluginRuntime
    from langbot_plugin.runtime.link import PluginLink
    from langbot_plugin.runtime.state import RuntimeOptions
    from langbot_plugin.worker.service import PluginService

    with PluginModules(root) as modules:
        loaded = load_plugin_here(root, modules)
        runtime = PluginRuntime(RuntimeOptions(data_dir=data_dir, debug_port=0, control_port=0))
        host_end, control_end = memory_pair()
        plugin_end, link_end = memory_pair()
        async with anyio.create_task_group() as tg:
            runtime.supervisor.bind(tg)
            tg.start_soon(runtime.serve_control, control_end, "harness-host")
            async with PluginRuntimeClient.over(host_end, host) as client:
                key = runtime.state.debug_keys.issue(client.workspace)
                tg.start_soon(PluginLink(runtime.state, key).serve, link_end, "harness-plugin")
                session = RPCSession(
                    plugin_end, PluginService(loaded), name="runtime", file_chunk_bytes=1 << 20
                )
                async with session.running():
                    try:
                        await plug.REGISTER_PLUGIN.call(
                            session, register_params(loaded, key.key), timeout=REGISTER_TIMEOUT
                        )
                    except RPCError as exc:
                        raise HarnessError(
                            f"{loaded.identity} did not start: {exc.message}"
                        ) from exc
                    yield Connection(client, None, loaded)
            tg.cancel_scope.cancel()


def _tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


@asynccontextmanager
async def child_process(root: Path, host: LocalHost, workdir: Path) -> AsyncGenerator[Connection]:
    """A real ``lbp rt`` child with the folder installed as a package."""
    from langbot_plugin.cli.common import CliError
    from langbot_plugin.cli.packaging import build_package

    try:
        built = build_package(root, workdir / "dist")
    except CliError as exc:
        raise HarnessError(f"{root} does not build into a package:\n{exc}") from None
    content = built.path.read_bytes()
    log_file = workdir / "lbp-rt.log"
    command = [
        sys.executable,
        "-m",
        "langbot_plugin.cli.__init__",
        "rt",
        "-s",
        "--ws-debug-port",
        str(free_port()),
        "--data-dir",
        str(workdir / "rt-data"),
    ]
    with log_file.open("wb") as log:
        process = await anyio.open_process(command, stderr=log, cwd=workdir)
        try:
            assert process.stdin is not None
            assert process.stdout is not None
            async with (
                stdio_transport(process.stdout, process.stdin) as transport,
                PluginRuntimeClient.over(transport, host) as client,
            ):
                binding, result = await client.install_package(content)
                if result.state != "running":
                    raise HarnessError(
                        f"lbp rt did not start {root.name}: {result.error_code}: "
                        f"{result.message}\n{_tail(log_file)}"
                    )
                yield Connection(client, binding, None, log_file)
        finally:
            # ``lbp rt -s`` stops by itself once its stdin closes: give it the time to.
            await stop_process(process, stdin_grace=STOP_SECONDS, grace=STOP_SECONDS)
