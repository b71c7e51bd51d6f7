"""``lbp rt status``: what a running ``lbp rt`` is doing, from its ``/status``.

    lbp rt status [--url http://127.0.0.1:5401] [--json]

Prints the live plugins, the calls each has not answered yet with their ages (a call
past the runtime's ``--stuck-call-sec`` is marked ``STUCK``), and the counters. Any
port of the runtime answers (the debug port by default: it is served in stdio mode
too). Beyond loopback the runtime wants the control token, read from
``LANGBOT_PLUGIN_RUNTIME_CONTROL_TOKEN``. A runtime that cannot be reached is one line
and exit status 1.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from langbot_plugin.cli.common import FAILURE, USAGE, CliError, Parser, guarded

__all__ = ["format_status", "main"]

PROG = "lbp rt status"
DEFAULT_URL = "http://127.0.0.1:5401"
TOKEN_ENV = "LANGBOT_PLUGIN_RUNTIME_CONTROL_TOKEN"
TOKEN_HEADER = "X-LangBot-Plugin-Runtime-Token"


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=PROG, description="Show the live plugins of a running lbp rt.")
    parser.add_argument(
        "--url", default=DEFAULT_URL, help=f"a port of the runtime (default {DEFAULT_URL})"
    )
    parser.add_argument("--json", action="store_true", help="print the runtime's JSON answer")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds to wait (10)")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    return guarded(PROG, lambda: _show(args))


def _fetch(url: str, timeout: float) -> dict[str, Any]:
    import urllib.error
    import urllib.parse
    import urllib.request

    parts = urllib.parse.urlsplit(url.strip())
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    if scheme not in ("http", "https") or not parts.netloc:
        raise CliError(f"--url {url!r} is not an http:// or ws:// address", USAGE)
    # a port of the runtime: any path given (ws://host:5400/control/ws) is left out
    base = f"{scheme}://{parts.netloc}"
    request = urllib.request.Request(f"{base}/status")
    token = os.environ.get(TOKEN_ENV, "").strip()
    if token:
        request.add_header(TOKEN_HEADER, token)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace").strip()
        raise CliError(f"{base}/status answered {exc.code}: {detail}", FAILURE) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise CliError(f"cannot reach lbp rt at {base}: {reason}", FAILURE) from None
    try:
        report = json.loads(body)
    except ValueError:
        raise CliError(f"{base}/status did not answer JSON", FAILURE) from None
    if not isinstance(report, dict):
        raise CliError(f"{base}/status did not answer a JSON object", FAILURE)
    return report  # pyright: ignore[reportUnknownVariableType]


def format_status(report: dict[str, Any]) -> str:
    """The report as an operator reads it."""
    lines: list[str] = []
    plugins: list[dict[str, Any]] = report.get("plugins") or []
    width = max([len("PLUGIN"), *(len(str(p.get("plugin"))) for p in plugins)])
    lines.append(f"{'PLUGIN':<{width}}  {'STATUS':<14} {'KIND':<9} OPEN CALLS")
    for plugin in plugins:
        calls: list[dict[str, Any]] = plugin.get("calls") or []
        kind = "debug" if plugin.get("debug") else "installed"
        status = str(plugin.get("status")) + ("" if plugin.get("enabled", True) else " (off)")
        lines.append(f"{plugin.get('plugin')!s:<{width}}  {status:<14} {kind:<9} {len(calls)}")
        for call in calls:
            mark = "  STUCK" if call.get("stuck") else ""
            what = "stream" if call.get("stream") else "call"
            lines.append(
                f"  {call.get('action')} ({what}): open {call.get('age_sec')} s, "
                f"no answer for {call.get('waiting_sec')} s{mark}"
            )
    lines.append(
        f"plugins: {len(plugins)}, open calls: {report.get('inflight', 0)}, "
        f"live runs: {report.get('live_runs', 0)}, stuck so far: "
        f"{report.get('stuck_total', 0)} (after {report.get('stuck_after_sec')} s)"
    )
    return "\n".join(lines)


def _show(args: argparse.Namespace) -> int:
    report = _fetch(args.url, args.timeout)
    print(json.dumps(report, indent=2) if args.json else format_status(report))
    return 0
