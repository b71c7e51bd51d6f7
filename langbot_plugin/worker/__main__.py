"""``python -m langbot_plugin.worker``: serve one installed plugin over stdin/stdout.

The plugin runtime starts one such process per installed plugin, with the plugin's
folder as working directory, and drives it over the stdio link (it sends
``initialize_plugin`` with the host's settings first). The process ends when the
runtime closes its stdin or asks it to shut down.

With ``--shared`` the process starts empty and serves the plugins the runtime attaches
to it (``attach_plugin_slot``), each in its own slot (:mod:`langbot_plugin.worker.shared`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


async def _serve(root: Path, shared: bool) -> None:
    from langbot_plugin.rpc import Dispatcher, RPCSession
    from langbot_plugin.rpc.transport_stdio import process_stdio_transport

    service: Dispatcher
    if shared:
        from langbot_plugin.worker.shared import SharedService

        service = SharedService()
    else:
        from langbot_plugin.worker.loader import LoadedPlugin
        from langbot_plugin.worker.service import PluginService

        service = PluginService(LoadedPlugin(root))
    from langbot_plugin.serving_gc import settle_for_serving

    settle_for_serving()  # the plugin's code is loaded: this process serves from now on
    async with process_stdio_transport(frame_threshold=None) as transport:
        session = RPCSession(transport, service, name="runtime", file_chunk_bytes=1 << 20)
        await session.serve()  # until the runtime closes stdin


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m langbot_plugin.worker")
    parser.add_argument("--plugin-dir", type=Path, default=Path("."))
    parser.add_argument("--shared", action="store_true", help="serve attached plugin slots")
    parser.add_argument("--log-level", default="INFO")
    args = parser.parse_args(argv)
    from langbot_plugin.worker.logging_setup import setup_worker_logging

    setup_worker_logging(args.log_level)
    from langbot_plugin.rpc.tracing import from_env

    from_env("lbp-worker")  # the runtime sets LBP_TRACES while it traces
    import anyio

    from langbot_plugin.api.definition.discovery import ManifestError

    try:
        anyio.run(_serve, args.plugin_dir.resolve(), args.shared)
    except ManifestError as exc:
        sys.stderr.write(f"plugin cannot be loaded: {exc}\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
