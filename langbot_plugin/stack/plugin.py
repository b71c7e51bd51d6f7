"""The plugin of a local stack: in this process, as ``lbp run``, or installed as a package.

- :func:`plugin_here`: a plugin loaded in this process joined to a runtime of this
  process (:func:`.runtime.runtime_here`) by an in-memory plugin link and registered as
  a debug plugin, the path ``lbp run`` takes. A breakpoint in the plugin stops the caller.
- :func:`start_plugin`: ``lbp run`` for a folder as a child, connected to a runtime's
  debug port with a debug key (handed over in the environment, never on the command
  line), with its hot reload.
- :func:`install_folder`: the folder built into a package as ``lbp build`` builds it
  and installed through the host's client, so the runtime runs it in its own worker.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Literal

import anyio
from anyio.abc import Process

from langbot_plugin.host import PluginRuntimeClient
from langbot_plugin.protocol import plugin_link as plug
from langbot_plugin.protocol.control_link import ApplyInstallationResult
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.rpc import RPCError, RPCSession
from langbot_plugin.rpc.processes import Log, open_child
from langbot_plugin.rpc.transport_memory import memory_pair
from langbot_plugin.runtime.app import PluginRuntime
from langbot_plugin.runtime.link import PluginLink
from langbot_plugin.stack.runtime import LBP_COMMAND, StackError
from langbot_plugin.worker.debug_client import register_params
from langbot_plugin.worker.loader import LoadedPlugin
from langbot_plugin.worker.service import PluginService

__all__ = ["install_folder", "plugin_here", "start_plugin"]

#: Seconds a plugin has to answer its registration.
REGISTER_TIMEOUT = 60.0


@asynccontextmanager
async def plugin_here(
    runtime: PluginRuntime, client: PluginRuntimeClient, loaded: LoadedPlugin
) -> AsyncGenerator[RPCSession]:
    """``loaded`` registered with ``runtime`` as a debug plugin of ``client``'s
    workspace until the block ends; yields the plugin's end of the link.
    :class:`StackError` when the plugin refuses to start."""
    key = runtime.state.debug_keys.issue(client.workspace)
    plugin_end, link_end = memory_pair()
    async with anyio.create_task_group() as tg:
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
                raise StackError(f"{loaded.identity} did not start: {exc.message}") from exc
            yield session
        tg.cancel_scope.cancel()


@asynccontextmanager
async def start_plugin(
    folder: Path,
    debug_url: str,
    key: str,
    *args: str,
    command: Sequence[str] = LBP_COMMAND,
    env: Mapping[str, str] | None = None,
    log: Log = None,
    stdout: int | IO[bytes] | Literal["log"] | None = "log",
) -> AsyncGenerator[Process]:
    """``lbp run`` in ``folder`` (module docstring), ``args`` its further flags;
    ``command`` replaces ``lbp``. ``env`` is its whole environment (``None``: this
    process's), the URL and key added. Its output goes to ``log`` (stdout where
    ``stdout`` says, if elsewhere). Stopped in order when the block ends."""
    environment = {
        **(os.environ if env is None else env),
        "DEBUG_RUNTIME_WS_URL": debug_url,
        "PLUGIN_DEBUG_KEY": key,
    }
    argv = [*command, "run", *args]
    async with open_child(argv, log=log, stdout=stdout, env=environment, cwd=folder) as process:
        yield process


async def install_folder(
    client: PluginRuntimeClient, folder: Path, dist: Path
) -> tuple[ActionScope, ApplyInstallationResult]:
    """Build ``folder`` into a package under ``dist`` and install it; the installation's
    binding and the runtime's answer. :class:`StackError` when it does not build."""
    from langbot_plugin.cli.common import CliError
    from langbot_plugin.cli.packaging import build_package

    try:
        built = build_package(folder, dist)
    except CliError as exc:
        raise StackError(f"{folder} does not build into a package:\n{exc}") from None
    return await client.install_package(built.path.read_bytes())
