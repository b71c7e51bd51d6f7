"""``lbp rt``: run the plugin runtime daemon."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lbp rt", description="Run the plugin runtime daemon.")
    parser.add_argument(
        "-s",
        "--stdio-control",
        action="store_true",
        help="take the host's control connection on stdin/stdout instead of WebSocket",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--ws-control-port", type=int, default=5400, help="control port (5400)")
    parser.add_argument("--ws-debug-port", type=int, default=5401, help="debug plugin port (5401)")
    parser.add_argument("--data-dir", type=Path, default=Path("data"), help="state directory")
    parser.add_argument("--pypi-index-url", default=None, help="index for plugin dependencies")
    parser.add_argument(
        "--pypi-trusted-host", action="append", default=[], help="trusted host (repeatable)"
    )
    parser.add_argument("--skip-deps-check", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--debug-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--log-level", default=None, help="DEBUG, INFO (default), WARNING")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    from langbot_plugin.cli.logs import setup_logging

    setup_logging(args.log_level)
    import anyio

    from langbot_plugin.runtime.app import PluginRuntime
    from langbot_plugin.runtime.state import RuntimeOptions

    options = RuntimeOptions(
        host=args.host,
        control_port=args.ws_control_port,
        debug_port=args.ws_debug_port,
        stdio=args.stdio_control,
        data_dir=args.data_dir,
        pypi_index_url=args.pypi_index_url,
        pypi_trusted_hosts=tuple(args.pypi_trusted_host),
    )
    try:
        runtime = PluginRuntime(options)
    except ValueError as exc:
        sys.stderr.write(f"lbp rt: {exc}\n")
        return 2
    try:
        anyio.run(runtime.run)
    except OSError as exc:
        sys.stderr.write(f"lbp rt: cannot serve: {exc}\n")
        return 1
    return 0
