"""``lbp run``: run the plugin in the current folder against a runtime's debug port."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lbp run",
        description=(
            "Connect the plugin in this folder to a plugin runtime for debugging. Reads "
            "DEBUG_RUNTIME_WS_URL and PLUGIN_DEBUG_KEY from ./.env or the environment."
        ),
    )
    parser.add_argument("--plugin-debug-key", default=None, help="overrides PLUGIN_DEBUG_KEY")
    parser.add_argument("--runtime-url", default=None, help="overrides DEBUG_RUNTIME_WS_URL")
    parser.add_argument("-d", "--dir", type=Path, default=Path("."), help="plugin folder (.)")
    parser.add_argument(
        "--no-reload", action="store_true", help="do not reload when the plugin's files change"
    )
    parser.add_argument("--log-level", default=None, help="DEBUG, INFO (default), WARNING")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    from langbot_plugin.cli.logs import setup_logging
    from langbot_plugin.worker.dotenv import load_dotenv

    setup_logging(args.log_level)
    root: Path = args.dir.resolve()
    load_dotenv(root / ".env")
    url = (
        args.runtime_url
        or os.environ.get("DEBUG_RUNTIME_WS_URL")
        or os.environ.get("RUNTIME_WS_URL")
    )
    key = (args.plugin_debug_key or os.environ.get("PLUGIN_DEBUG_KEY") or "").strip()
    if not url:
        sys.stderr.write(
            "lbp run: set DEBUG_RUNTIME_WS_URL in .env (e.g. ws://127.0.0.1:5401/plugin/debug/ws)\n"
        )
        return 2
    if len(key) < 32 or any(c.isspace() for c in key):
        sys.stderr.write(
            "lbp run: PLUGIN_DEBUG_KEY is missing or malformed; copy the key from LangBot's "
            "plugin debug page into .env\n"
        )
        return 2

    import anyio

    from langbot_plugin.api.definition.discovery import ManifestError
    from langbot_plugin.worker.debug_client import DebugClient, KeyRefusedError

    try:
        anyio.run(DebugClient(root, url, key, hot_reload=not args.no_reload).run)
    except ManifestError as exc:
        sys.stderr.write(f"lbp run: {exc}\n")
        return 2
    except KeyRefusedError as exc:
        sys.stderr.write(f"lbp run: the runtime refused this plugin: {exc}\n")
        return 1
    return 0
