"""``lbp box``: run the Box sandbox runtime, build its default sandbox image, or use a
running Box from the command line.

    lbp box [-s] [--host 127.0.0.1] [--ws-control-port 5410] [--backend NAME] [--log-level info]
    lbp box image build [--tag NAME] [--suite bookworm] [--include PKG,...] [--mirror URL]
    lbp box exec|ls|sessions|status|rm ...   (langbot_plugin.cli.box_client)

The same rules as ``lbp rt``: one log vocabulary and format
(:mod:`langbot_plugin.cli.daemon`), every error on one line, exit 2 for bad input (a
flag, ``LANGBOT_BOX_CONFIG``, a non-loopback bind without a token), 1 when the Box
cannot serve (its port in use) or the image build fails. Only :mod:`argparse` is
imported until a command runs; the Box itself lives in :mod:`box_runtime`.
"""

from __future__ import annotations

import argparse

from langbot_plugin.cli.common import FAILURE, USAGE, CliError, Parser, guarded
from langbot_plugin.cli.daemon import add_log_flags, port

__all__ = ["main"]

PROG = "lbp box"
COMMANDS_HELP = """\
commands:
  lbp box               run the Box runtime (this page's options)
  lbp box image build   build the default sandbox image offline
                        (see 'lbp box image build --help')
a client of a running Box (each with --url, default ws://127.0.0.1:5410/rpc/ws):
  lbp box exec -- CMD   run a command in a session (--session, --image, --timeout)
  lbp box ls [PATH]     list a folder of a session's workspace
  lbp box sessions      list the client's sessions
  lbp box status        the backend in use and what the Box holds
  lbp box rm SESSION    delete a session
"""


def _server_parser() -> argparse.ArgumentParser:
    # the registry alone: no pydantic, no SDK
    from box_runtime.backends import LOCAL_ORDER, NAMES

    parser = Parser(
        prog=PROG,
        usage="lbp box [options]\n       lbp box image build [options]",
        description=(
            "Run the LangBot Box sandbox runtime: the action RPC on /rpc/ws (or on\n"
            "stdin/stdout with -s, as LangBot starts it), /healthz and /readyz on one port.\n"
            "It logs at startup which sandbox backend it will use."
        ),
        epilog=COMMANDS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
        type=port,
        default=5410,
        metavar="PORT",
        help="port of /rpc/ws, /healthz, /readyz (default 5410)",
    )
    parser.add_argument(
        "--backend",
        choices=("local", *NAMES),
        help="the sandbox backend, kept whatever a config or the host's box_init says "
        f"(default: LANGBOT_BOX_CONFIG's backend, else local: {', then '.join(LOCAL_ORDER)})",
    )
    add_log_flags(parser)
    return parser


def _image_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=f"{PROG} image",
        description="Manage the Box's default sandbox image.",
    )
    commands = parser.add_subparsers(
        dest="action", metavar="COMMAND", title="commands", parser_class=Parser
    )
    build = commands.add_parser(
        "build",
        help="build the default sandbox image offline (mmdebstrap | docker import)",
        description=(
            "Build the default sandbox image offline: mmdebstrap makes a Debian root "
            "filesystem and streams it into docker import; no registry is needed. Progress "
            "(mmdebstrap's lines and the megabytes imported) goes to stderr."
        ),
    )
    build.add_argument("--tag", action="append", help="image name (default: the Box's default)")
    build.add_argument("--suite", default="bookworm", help="Debian suite (default bookworm)")
    build.add_argument(
        "--include",
        default="",
        help="extra Debian packages, comma separated (python3, python3-venv, "
        "ca-certificates and procps are always in)",
    )
    build.add_argument("--mirror", default="", help="Debian mirror URL (default: mmdebstrap's)")
    build.add_argument(
        "--docker", default="docker", help="docker CLI used for 'docker import' (default docker)"
    )
    return parser


def _run_server(args: argparse.Namespace) -> int:
    from langbot_plugin.cli.daemon import (
        bind_failure,
        check_stdio_pipes,
        setup_logging,
        setup_traces,
    )

    if args.stdio:
        check_stdio_pipes("-s")
    setup_logging(args.log_level, args.log_format)
    setup_traces(args.traces, "lbp-box")
    import anyio

    from box_runtime.cli import serve_box
    from box_runtime.errors import BoxError
    from box_runtime.server import StartupError

    try:
        anyio.run(serve_box, args.host, args.ws_control_port, args.stdio, args.backend)
    except StartupError as exc:
        cause = exc.__cause__
        if isinstance(cause, OSError):
            flag = "--ws-control-port"
            raise bind_failure(cause, "Box port", args.host, args.ws_control_port, flag) from None
        raise CliError(str(exc), USAGE) from None
    except BoxError as exc:
        raise CliError(str(exc), USAGE) from None
    return 0


def _run_image(args: argparse.Namespace) -> int:
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
        raise CliError(str(exc), FAILURE) from None
    return 0


def main(argv: list[str]) -> int:
    from langbot_plugin.cli.box_client import CLIENT_COMMANDS, client_main

    if argv and argv[0] in CLIENT_COMMANDS:
        return client_main(argv[0], argv[1:])
    if argv and argv[0] == "image":
        parser = _image_parser()
        args = parser.parse_args(argv[1:])
        if args.action is None:
            parser.error("choose a command: build")
        return guarded(f"{PROG} image {args.action}", lambda: _run_image(args))
    args = _server_parser().parse_args(argv)
    return guarded(PROG, lambda: _run_server(args))
