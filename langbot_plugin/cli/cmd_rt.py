"""``lbp rt``: run the plugin runtime daemon.

Settings come from the flags, then the TOML file of ``--config`` (or
``$LBP_RT_CONFIG``), then defaults (see :mod:`langbot_plugin.cli.rt_config`). Every
error is one line on stderr: exit 2 for bad input (a flag, the config file, a
non-loopback bind without a token), 1 when the runtime cannot serve (a port in use,
the data folder held by another runtime).
"""

from __future__ import annotations

import argparse
import errno
from pathlib import Path

from langbot_plugin.cli.common import FAILURE, USAGE, CliError, Parser, guarded
from langbot_plugin.cli.daemon import add_log_flags, port
from langbot_plugin.cli.rt_config import POLICIES

PROG = "lbp rt"


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG,
        description=(
            "Run the plugin runtime daemon: LangBot connects to its control port (or "
            "starts it with -s and talks over stdin/stdout), plugins under development "
            "connect to its debug port (lbp run). Flags override the config file."
        ),
    )
    parser.add_argument(
        "-s",
        "--stdio-control",
        action="store_true",
        help="take the host's control connection on stdin/stdout instead of WebSocket",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="TOML settings file (default $LBP_RT_CONFIG); keys are the flags' names "
        "(pypi_trusted_hosts, trusted_keys, plugin_limits for the repeatable ones)",
    )
    parser.add_argument("--host", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--ws-control-port", type=port, metavar="PORT", help="control port (5400)")
    parser.add_argument(
        "--ws-debug-port", type=port, metavar="PORT", help="debug plugin port (5401)"
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        help=(
            "state folder (default: ~/.local/share/langbot-plugin/runtime, or "
            "./data/plugin-runtime with -s)"
        ),
    )
    parser.add_argument("--pypi-index-url", help="index for plugin dependencies")
    parser.add_argument(
        "--pypi-trusted-host",
        action="append",
        help="trusted host (repeatable, or comma-separated)",
    )
    parser.add_argument(
        "--debug-only",
        action="store_true",
        help="serve plugins under development only: installed plugins are verified and "
        "kept, not started",
    )
    parser.add_argument(
        "--skip-deps-check",
        action="store_true",
        help="never run pip for installed plugins: a plugin with requirements uses its "
        "existing environment, or the runtime's interpreter",
    )
    parser.add_argument(
        "--signature-policy",
        choices=POLICIES,
        help="packages installed through the host: off (default: not checked), warn (log "
        "those not signed by a trusted key) or require (refuse them)",
    )
    parser.add_argument(
        "--trusted-key",
        action="append",
        metavar="KEY",
        help="a publisher key to trust (repeatable): a key ring file of 'KEY_ID: BASE64' "
        "lines (lbp keys generate writes one) or KEY_ID=BASE64",
    )
    parser.add_argument(
        "--worker-env",
        action="append",
        metavar="NAME",
        help="an environment variable plugin workers keep beyond the allowlist (repeatable; "
        "PREFIX_* names a prefix)",
    )
    parser.add_argument(
        "--stuck-call-sec",
        type=_seconds,
        metavar="SECONDS",
        help="report a plugin call unanswered this long: one log line, counted, and "
        "shown by 'lbp rt status' (default 60)",
    )
    _add_confinement(parser)
    add_log_flags(parser)
    return parser


def _seconds(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not number > 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive number of seconds")
    return number


def _add_confinement(parser: argparse.ArgumentParser) -> None:
    """The flags of plugin workers' confinement and limits (docs/security.md)."""
    parser.add_argument(
        "--confine",
        choices=("auto", "on", "off"),
        help="confine installed plugins' workers (nsjail): auto (default: wherever this "
        "machine allows, else logged), on (refuse to start where it cannot), off",
    )
    parser.add_argument(
        "--worker-start",
        choices=("fork", "exec"),
        help="how an unconfined worker on the runtime's interpreter starts: fork "
        "(default: from a template process with the SDK imported) or exec (a fresh "
        "interpreter); confined workers and plugins with their own environment always exec",
    )
    parser.add_argument(
        "--worker-network",
        choices=("host", "none"),
        help="a confined worker's network: host (default) or none (its own loopback only)",
    )
    parser.add_argument("--nsjail", metavar="PATH", help="the nsjail binary to confine with")
    for flag, what, kind in (
        ("--worker-memory-mb", "memory in MB", int),
        ("--worker-pids", "processes and threads", int),
        ("--worker-open-files", "open files", int),
        ("--worker-cpus", "CPU cores", float),
    ):
        parser.add_argument(flag, type=kind, metavar="N", help=f"each worker's {what} (0: none)")
    parser.add_argument(
        "--plugin-limits",
        action="append",
        metavar="AUTHOR/NAME:KEY=VALUE,...",
        help="one plugin's own limits (repeatable), keys memory_mb, pids, open_files, cpus",
    )


def main(argv: list[str]) -> int:
    if argv[:1] == ["status"]:
        from langbot_plugin.cli.rt_status import main as status

        return status(argv[1:])
    args = build_parser().parse_args(argv)
    return guarded(PROG, lambda: _serve(args))


def _serve(args: argparse.Namespace) -> int:
    from langbot_plugin.cli.daemon import bind_failure, setup_logging, setup_traces
    from langbot_plugin.cli.rt_config import resolve_settings

    options = resolve_settings(args)
    if options.stdio:
        from langbot_plugin.cli.daemon import check_stdio_pipes

        check_stdio_pipes("-s")
    setup_logging(options.log_level, options.log_format)
    setup_traces(options.traces, "lbp-rt")
    import logging

    import anyio

    from langbot_plugin.runtime.app import BindError, PluginRuntime
    from langbot_plugin.runtime.data_lock import DataDirBusyError, hold_data_dir
    from langbot_plugin.serving_gc import settle_for_serving

    try:
        options.check()
    except ValueError as exc:
        raise CliError(str(exc), USAGE) from None
    logger = logging.getLogger("langbot_plugin.runtime")
    if options.config_file is not None:
        logger.info("settings from %s (flags override it)", options.config_file)
    logger.debug("settings: %s", options)
    if options.signature_policy != "off":
        keys = ", ".join(options.trusted_keys) or "none"
        policy = options.signature_policy
        logger.info("package signature policy %s; trusted keys: %s", policy, keys)
    try:
        lock = hold_data_dir(options.data_dir.resolve())
    except DataDirBusyError as exc:
        raise CliError(str(exc), FAILURE) from None
    except OSError as exc:  # a file in the way, a read-only or full disk, no permission
        wrong_input = exc.errno in (errno.EEXIST, errno.ENOTDIR)
        raise CliError(
            f"the data folder {options.data_dir} cannot be used: {exc.strerror or exc}"
            f"{f' ({exc.filename})' if exc.filename else ''}; choose another with --data-dir",
            USAGE if wrong_input else FAILURE,
        ) from None
    from langbot_plugin.runtime.confine import ConfinementUnavailableError

    try:
        runtime = PluginRuntime(options)
        runtime.on_started = settle_for_serving
        anyio.run(runtime.run)
    except ConfinementUnavailableError as exc:
        raise CliError(exc.message, FAILURE) from None
    except BindError as exc:
        flag = "--ws-debug-port" if exc.what == "debug port" else "--ws-control-port"
        raise bind_failure(exc.error, exc.what, exc.host, exc.port, flag) from None
    finally:
        if lock is not None:
            lock.close()
    return 0
