"""``lbp box``: run the Box runtime, or build its default sandbox image.

    lbp box [-s] [--host 127.0.0.1] [--ws-control-port 5410] [--log-level info]
    lbp box image build [--tag NAME] [--suite bookworm] [--include PKG,...] [--mirror URL]

Only :mod:`argparse` is imported until a command actually runs.
"""

from __future__ import annotations

import argparse
import logging
import sys

__all__ = ["main"]


def _server_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lbp box",
        description="Run the LangBot Box sandbox runtime (action RPC on /rpc/ws).",
        epilog="Subcommands: 'lbp box image build --help' builds the default sandbox image.",
    )
    parser.add_argument(
        "-s",
        "--stdio",
        "--stdio-control",
        dest="stdio",
        action="store_true",
        help="serve the action RPC on stdin/stdout (how the host spawns the Box)",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (non-loopback needs LANGBOT_BOX_CONTROL_TOKEN)",
    )
    parser.add_argument(
        "--ws-control-port",
        type=int,
        default=5410,
        help="port of /rpc/ws, /healthz, /readyz (default 5410)",
    )
    parser.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="log verbosity (logs go to stderr)",
    )
    return parser


def _image_parser() -> argparse.ArgumentParser:
    from box_runtime.config import DEFAULT_IMAGE

    parser = argparse.ArgumentParser(
        prog="lbp box image build",
        description="Build the default sandbox image offline: mmdebstrap | docker import.",
    )
    parser.add_argument("--tag", action="append", help=f"image name (default {DEFAULT_IMAGE})")
    parser.add_argument("--suite", default="bookworm", help="Debian suite (default bookworm)")
    parser.add_argument(
        "--include",
        default="",
        help="extra Debian packages, comma separated (python3 and coreutils are always in)",
    )
    parser.add_argument("--mirror", default="", help="Debian mirror URL (default: mmdebstrap's)")
    parser.add_argument(
        "--docker", default="docker", help="docker CLI used for 'docker import' (default docker)"
    )
    return parser


def _run_server(argv: list[str]) -> int:
    args = _server_parser().parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    import anyio

    from box_runtime.errors import BoxError
    from box_runtime.server import StartupError, options_from_env, serve

    options = options_from_env(args.host, args.ws_control_port, args.stdio)
    try:
        anyio.run(serve, options)
    except (StartupError, BoxError) as exc:
        sys.stderr.write(f"lbp box: {exc}\n")
        return 2
    return 0


def _run_image(argv: list[str]) -> int:
    if not argv or argv[0] != "build":
        sys.stderr.write("usage: lbp box image build [options]  (see --help)\n")
        return 2
    args = _image_parser().parse_args(argv[1:])
    from box_runtime.image import ImageBuildError, build_image

    try:
        build_image(
            tags=args.tag,
            suite=args.suite,
            include=[p.strip() for p in args.include.split(",") if p.strip()],
            mirror=args.mirror,
            docker=args.docker,
        )
    except ImageBuildError as exc:
        sys.stderr.write(f"lbp box image build: {exc}\n")
        return 1
    return 0


def main(argv: list[str]) -> int:
    if argv and argv[0] == "image":
        return _run_image(argv[1:])
    return _run_server(argv)
