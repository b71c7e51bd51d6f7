"""``lbp run``: run the plugin in the current folder against a runtime's debug port.

Checked before anything connects, each a one-line error with exit 2: the folder is
a plugin that loads, the URL is a WebSocket URL of a debug endpoint (not the control
endpoint, not ``http://``), the key looks like a debug key. A key the runtime refuses
exits 1. Without ``DEBUG_RUNTIME_WS_URL`` the URL is ``ws://127.0.0.1:5401/plugin/debug/ws``,
where ``lbp rt`` and LangBot's own runtime serve plugins by default.

The reference's worker flags are accepted with their meaning: ``-s`` serves the link
on stdin/stdout (how a runtime runs an installed plugin), ``--prod`` runs as an
installed plugin (registers with ``$LANGBOT_PLUGIN_REGISTRATION_CAPABILITY``, no hot
reload, no reconnect), ``--pypi-index-url`` / ``--pypi-trusted-host`` set the index
for pip calls the plugin makes, ``--tag`` labels the process (see
:mod:`langbot_plugin.worker.prod`).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from langbot_plugin.cli.common import FAILURE, USAGE, CliError, Parser, guarded
from langbot_plugin.cli.daemon import add_log_flags

PROG = "lbp run"


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG,
        description=(
            "Connect the plugin in this folder to a plugin runtime for debugging, and reload "
            "it when its files change. Reads DEBUG_RUNTIME_WS_URL (default "
            "ws://127.0.0.1:5401/plugin/debug/ws) and PLUGIN_DEBUG_KEY from ./.env or the "
            "environment."
        ),
    )
    parser.add_argument("--plugin-debug-key", help="overrides PLUGIN_DEBUG_KEY")
    parser.add_argument("--runtime-url", help="overrides DEBUG_RUNTIME_WS_URL")
    parser.add_argument("-d", "--dir", type=Path, default=Path("."), help="plugin folder (.)")
    parser.add_argument(
        "--no-reload", action="store_true", help="do not reload when the plugin's files change"
    )
    parser.add_argument(
        "-s",
        "--stdio",
        action="store_true",
        help="serve the runtime on stdin/stdout (how a runtime starts an installed plugin)",
    )
    parser.add_argument(
        "--prod",
        action="store_true",
        help="run as an installed plugin: register with $LANGBOT_PLUGIN_REGISTRATION_CAPABILITY "
        "instead of a debug key, never reload, end when the runtime goes away",
    )
    parser.add_argument(
        "--pypi-index-url",
        help="index for pip calls the plugin makes (sets LANGBOT_PLUGIN_PYPI_INDEX_URL, "
        "PIP_INDEX_URL)",
    )
    parser.add_argument(
        "--pypi-trusted-host",
        help="comma-separated trusted hosts for those calls (LANGBOT_PLUGIN_PYPI_TRUSTED_HOST, "
        "PIP_TRUSTED_HOST)",
    )
    parser.add_argument(
        "--tag",
        help="a label for ps/htop, e.g. author/plugin_name (logged; cosmetic only)",
    )
    add_log_flags(parser)
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    return guarded(PROG, lambda: _run(args))


def _runtime_url(args: argparse.Namespace) -> tuple[str, str]:
    """The URL, checked, and where it came from (named by the error that refuses it)."""
    from langbot_plugin.worker.debug_client import DEFAULT_DEBUG_URL, check_debug_url

    url, source = DEFAULT_DEBUG_URL, "the default"
    for name, value in (
        ("--runtime-url", args.runtime_url),
        ("DEBUG_RUNTIME_WS_URL", os.environ.get("DEBUG_RUNTIME_WS_URL")),
        ("RUNTIME_WS_URL", os.environ.get("RUNTIME_WS_URL")),
    ):
        if value and value.strip():
            url, source = value.strip(), name
            break
    if (problem := check_debug_url(url)) is not None:
        raise CliError(f"{source}: {problem}", USAGE)
    return url, source


def _export_index(args: argparse.Namespace) -> None:
    """The index settings, where pip (and the reference's helpers) read them."""
    if args.pypi_index_url:
        os.environ["LANGBOT_PLUGIN_PYPI_INDEX_URL"] = args.pypi_index_url
        os.environ["PIP_INDEX_URL"] = args.pypi_index_url
    if args.pypi_trusted_host:
        os.environ["LANGBOT_PLUGIN_PYPI_TRUSTED_HOST"] = args.pypi_trusted_host
        hosts = [h.strip() for h in args.pypi_trusted_host.split(",") if h.strip()]
        os.environ["PIP_TRUSTED_HOST"] = " ".join(hosts)


def _run_production(args: argparse.Namespace, root: Path) -> int:
    """``-s`` and/or ``--prod``: one link, no reload, the process ends with it."""
    import anyio
    from websockets.exceptions import InvalidStatus

    from langbot_plugin.worker.hot_reload import ReloadError, load_candidate
    from langbot_plugin.worker.prod import serve_over_stdio, serve_production_ws, take_capability

    capability = take_capability() if args.prod else ""
    try:
        loaded = load_candidate(root)
    except ReloadError as exc:
        raise CliError(str(exc.problems[0]), USAGE, [str(p) for p in exc.problems]) from None
    if args.stdio:
        anyio.run(lambda: serve_over_stdio(loaded, prod=args.prod, capability=capability))
        return 0
    url, _ = _runtime_url(args)
    if not capability:
        raise CliError(
            "--prod needs the registration capability the runtime issued, in "
            "LANGBOT_PLUGIN_REGISTRATION_CAPABILITY",
            USAGE,
        )
    try:
        anyio.run(lambda: serve_production_ws(loaded, url, capability))
    except InvalidStatus as exc:
        raise CliError(
            f"the runtime at {url} refused this production registration "
            f"(HTTP {exc.response.status_code}); lbp rt accepts only debug keys on its "
            "plugin port: install the plugin through LangBot instead",
            FAILURE,
        ) from None
    except OSError as exc:
        raise CliError(f"cannot reach the runtime at {url}: {exc}", FAILURE) from None
    return 0


def _key_problem(key: str) -> str:
    if any(c.isspace() for c in key):
        return "it contains a space"
    return f"{len(key)} characters, too short"


def _run(args: argparse.Namespace) -> int:
    from langbot_plugin.cli.daemon import setup_logging, setup_traces

    setup_logging(args.log_level, args.log_format)
    setup_traces(args.traces, "lbp-worker")
    from langbot_plugin.worker.dotenv import load_dotenv

    root: Path = args.dir.resolve()
    load_dotenv(root / ".env")
    import logging

    import anyio

    _export_index(args)
    label = "".join(ch for ch in args.tag or "" if ch.isprintable()).strip()
    if label:
        logging.getLogger("langbot_plugin.run").info("process label: %s", label)
    if args.stdio or args.prod:
        return _run_production(args, root)

    from langbot_plugin.rpc.signals import until_signalled
    from langbot_plugin.worker.debug_client import DebugClient, EndpointError, KeyRefusedError
    from langbot_plugin.worker.hot_reload import ReloadError, load_candidate

    try:
        loaded = load_candidate(root)
    except ReloadError as exc:
        raise CliError(str(exc.problems[0]), USAGE, [str(p) for p in exc.problems]) from None
    url, source = _runtime_url(args)
    key = (args.plugin_debug_key or os.environ.get("PLUGIN_DEBUG_KEY") or "").strip()
    if len(key) < 32 or any(c.isspace() for c in key):
        what = "missing" if not key else f"malformed ({_key_problem(key)})"
        raise CliError(
            f"PLUGIN_DEBUG_KEY is {what}: copy the current key from LangBot > Extensions > "
            "Debug Info (it is rotated every two hours) into .env as PLUGIN_DEBUG_KEY=<key> "
            "(or pass --plugin-debug-key); a key is one word of at least 32 characters",
            USAGE,
        )
    if source == "the default":
        logging.getLogger("langbot_plugin.run").info("no DEBUG_RUNTIME_WS_URL set: using %s", url)
    client = DebugClient(root, url, key, hot_reload=not args.no_reload)
    try:
        anyio.run(until_signalled, lambda: client.run(loaded), "lbp run")
    except EndpointError as exc:
        raise CliError(str(exc), USAGE) from None
    except KeyRefusedError as exc:
        raise CliError(f"the runtime refused this plugin's debug key: {exc}", FAILURE) from None
    except ReloadError as exc:  # the plugin's own code raised while it started
        raise CliError(str(exc.problems[0]), USAGE, [str(p) for p in exc.problems]) from None
    return 0
