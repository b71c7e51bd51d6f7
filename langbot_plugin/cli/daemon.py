"""What ``lbp rt``, ``lbp box`` and ``lbp run`` share: log levels, ports, logging, bind errors.

One vocabulary (``--log-level``/``LBP_LOG_LEVEL``, ``--log-format``/``LBP_LOG_FORMAT``,
``--traces``/``LBP_TRACES``) and one log format on stderr, both shown in
docs/operations.md ("Logs, health and errors"); and one way to report a port that
cannot be bound: a single line, exit status 1 when the port is taken or not allowed
(the machine's state), 2 when the address is wrong. Only the standard library is
imported here (it is loaded before ``--help`` answers).
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Callable

from langbot_plugin.cli.common import FAILURE, USAGE, CliError

__all__ = [
    "LOG_FORMAT",
    "LOG_FORMATS",
    "LOG_LEVELS",
    "add_log_flags",
    "bind_failure",
    "log_format",
    "log_level",
    "port",
    "setup_logging",
    "setup_traces",
]

LOG_LEVELS = ("debug", "info", "warning", "error")
LOG_FORMAT = "%(asctime)s.%(msecs)03d %(levelname)-7s %(name)s: %(message)s"
LOG_DATE_FORMAT = "%Y-%m-%d %H:%M:%S"
LOG_LEVEL_ENV = "LBP_LOG_LEVEL"
LOG_FORMATS = ("text", "json")
LOG_FORMAT_ENV = "LBP_LOG_FORMAT"
#: Libraries whose INFO lines are noise for an operator.
QUIET_LOGGERS = ("websockets", "asyncio", "docker", "urllib3", "aiohttp.access")


def _one_of(value: str, choices: tuple[str, ...], what: str) -> str:
    chosen = value.strip().lower()
    if chosen not in choices:
        raise argparse.ArgumentTypeError(f"{value!r} is not a {what} (choose {', '.join(choices)})")
    return chosen


def log_level(value: str) -> str:
    """``argparse`` type: one of :data:`LOG_LEVELS`, in any case."""
    return _one_of(value, LOG_LEVELS, "log level")


def log_format(value: str) -> str:
    """``argparse`` type: one of :data:`LOG_FORMATS`, in any case."""
    return _one_of(value, LOG_FORMATS, "log format")


def port(value: str) -> int:
    """``argparse`` type: a TCP port number, 1-65535."""
    try:
        number = int(value, 10)
    except ValueError:
        number = -1
    if not 1 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port (1-65535)")
    return number


def add_log_flags(parser: argparse.ArgumentParser, *, level_only: bool = False) -> None:
    """``--log-level``, and unless ``level_only`` ``--log-format`` and ``--traces``."""
    parser.add_argument(
        "--log-level",
        type=log_level,
        metavar="LEVEL",
        help=f"{', '.join(LOG_LEVELS)} (default info, or ${LOG_LEVEL_ENV}); logs go to stderr",
    )
    if level_only:
        return
    parser.add_argument(
        "--log-format",
        type=log_format,
        metavar="FORMAT",
        help=f"text or json: one JSON object a line (default text, or ${LOG_FORMAT_ENV})",
    )
    parser.add_argument(
        "--traces",
        action="store_true",
        default=False,
        help="send OpenTelemetry traces (needs langbot-plugin[otel]; exporter and endpoint "
        "from the OTEL_* variables; or $LBP_TRACES=on)",
    )


def setup_traces(flag: bool, service_name: str) -> bool:
    """Turn traces on when ``--traces`` or ``$LBP_TRACES`` asks (exit status 2 with what
    to install when the extra is missing); whether they are on."""
    from langbot_plugin.rpc import tracing

    if not tracing.wanted(flag):
        return False
    try:
        tracing.enable(service_name)
    except tracing.TracingUnavailableError as exc:
        raise CliError(str(exc), USAGE) from None
    return True


def _from_env(name: str, parse: Callable[[str], str], default: str) -> str:
    raw = os.environ.get(name, "").strip()
    try:
        return parse(raw) if raw else default
    except argparse.ArgumentTypeError as exc:
        raise CliError(f"{name}: {exc}", USAGE) from None


def setup_logging(level: str | None, fmt: str | None = None) -> str:
    """Log to stderr at ``level`` (or ``$LBP_LOG_LEVEL``, or info), as text
    (:data:`LOG_FORMAT`) or JSON lines (``fmt``, or ``$LBP_LOG_FORMAT``)."""
    import logging

    chosen = level if level is not None else _from_env(LOG_LEVEL_ENV, log_level, "info")
    shape = fmt if fmt is not None else _from_env(LOG_FORMAT_ENV, log_format, "text")
    from langbot_plugin.rpc.redaction import RedactingFilter

    handler = logging.StreamHandler(sys.stderr)
    if shape == "json":
        from langbot_plugin.rpc.log_context import JsonLogFormatter

        handler.setFormatter(JsonLogFormatter())
    else:
        handler.setFormatter(logging.Formatter(LOG_FORMAT, LOG_DATE_FORMAT))
    handler.addFilter(RedactingFilter())  # no secret in a daemon's log
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(chosen.upper())
    for noisy in QUIET_LOGGERS:
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return chosen


def check_stdio_pipes(flag: str) -> None:
    """``-s``: the RPC runs over stdin and stdout, which must be pipes or sockets (how
    LangBot starts the daemon), or a terminal; a file or ``/dev/null`` cannot carry it."""
    import os
    import stat

    for fd, name in ((0, "stdin"), (1, "stdout")):
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            mode = 0
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)):
            raise CliError(
                f"{flag} serves the RPC on stdin and stdout, and {name} is not a pipe or "
                "a socket (LangBot starts it with pipes); to run it on its own, leave out "
                f"{flag} and connect over WebSocket",
                USAGE,
            )


def bind_failure(exc: OSError, what: str, host: str, number: int, flag: str) -> CliError:
    """One line for a port that cannot be bound, with the exit status it deserves."""
    import socket

    lead = f"cannot listen on {host}:{number} ({what})"
    if isinstance(exc, socket.gaierror):
        return CliError(f"{lead}: unknown address {host!r}", USAGE)
    if exc.errno == errno.EADDRINUSE:
        why = (
            f"the port is already in use; stop the other process or choose another port with {flag}"
        )
        return CliError(f"{lead}: {why}", FAILURE)
    if exc.errno == errno.EADDRNOTAVAIL:
        return CliError(f"{lead}: {host} is not an address of this machine", USAGE)
    if exc.errno == errno.EACCES:
        why = f"permission denied (ports below 1024 need privileges; choose another with {flag})"
        return CliError(f"{lead}: {why}", FAILURE)
    return CliError(f"{lead}: {exc.strerror or exc}", FAILURE)
