"""``lbp box exec|ls|sessions|status|rm``: a command-line client of a running Box.

    lbp box exec [--session ID] [--image IMAGE] [--workdir DIR] [--timeout SEC] -- CMD...
    lbp box ls [--session ID] [PATH]
    lbp box sessions
    lbp box status
    lbp box rm SESSION...

Each connects to ``--url`` (default ``ws://127.0.0.1:5410/rpc/ws``) with the token of
``LANGBOT_BOX_CONTROL_TOKEN`` when set, the way the host does. Sessions are the
client's own (a Box keeps each workspace's sessions apart; the host's are in its
workspace). ``exec`` prints the command's output and exits with its exit status.
Errors are one line: exit 1 when the Box cannot be reached or refuses, 2 for bad flags.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from langbot_plugin.cli.common import FAILURE, USAGE, CliError, Parser, guarded

__all__ = ["CLIENT_COMMANDS", "client_main"]

DEFAULT_URL = "ws://127.0.0.1:5410/rpc/ws"
DEFAULT_SESSION = "cli"
TOKEN_ENV = "LANGBOT_BOX_CONTROL_TOKEN"

CLIENT_COMMANDS = {
    "exec": "run a command in a session (created on first use)",
    "ls": "list a folder of a session's workspace",
    "sessions": "list this client's sessions",
    "status": "the backend in use and what the Box holds",
    "rm": "delete sessions",
}


def _parser(command: str) -> argparse.ArgumentParser:
    parser = Parser(prog=f"lbp box {command}", description=CLIENT_COMMANDS[command] + ".")
    parser.add_argument("--url", default=DEFAULT_URL, help=f"the Box's RPC URL ({DEFAULT_URL})")
    if command in ("exec", "ls"):
        parser.add_argument("--session", default=DEFAULT_SESSION, help="session id (cli)")
    if command == "exec":
        parser.add_argument("--image", default="", help="image of a new session (the Box's)")
        parser.add_argument("--workdir", default="", help="working directory in the sandbox")
        parser.add_argument("--timeout", type=int, help="seconds before it is killed")
        parser.add_argument("--network", action="store_true", help="a new session gets network")
        parser.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- COMMAND...")
    elif command == "ls":
        parser.add_argument("path", nargs="?", default=".", help="folder (the workspace)")
    elif command == "rm":
        parser.add_argument("sessions", nargs="+", metavar="SESSION")
    return parser


def client_main(command: str, argv: list[str]) -> int:
    args = _parser(command).parse_args(argv)
    return guarded(f"lbp box {command}", lambda: _run(command, args))


def _run(command: str, args: argparse.Namespace) -> int:
    import anyio

    from langbot_plugin.rpc import RPCError

    if command == "exec":
        words = [w for w in args.cmd if w != "--"] if args.cmd[:1] == ["--"] else args.cmd
        if not words:
            raise CliError("give the command to run, e.g. lbp box exec -- ls -la", USAGE)
        args.cmd = words[0] if len(words) == 1 else shlex.join(words)
    action: Callable[[Any, argparse.Namespace], Awaitable[int]] = ACTIONS[command]
    token = os.environ.get(TOKEN_ENV, "").strip() or None

    async def main() -> int:
        from box_runtime.client import BoxClient

        async with BoxClient.connect(args.url, token=token) as client:
            return await action(client, args)

    try:
        return anyio.run(main)
    except Exception as raised:
        exc: BaseException = raised
        while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]  # the client's task group: its one error
        if isinstance(exc, RPCError):
            raise CliError(f"{exc.code}: {exc.message}", FAILURE) from None
        # the connection: refused, a wrong path, a refused token
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if status in (401, 403):
            hint = (
                f"set {TOKEN_ENV} to its control token"
                if token is None
                else f"check {TOKEN_ENV}; a Box bound to one LangBot instance "
                "(LANGBOT_BOX_TRUSTED_INSTANCE_UUID) takes no other client"
            )
            raise CliError(
                f"the Box at {args.url} refused the connection (HTTP {status}): {hint}", FAILURE
            ) from None
        reason = (exc.strerror if isinstance(exc, OSError) else None) or str(exc)
        reason = reason or type(exc).__name__
        raise CliError(f"cannot reach the Box at {args.url}: {reason}", FAILURE) from None


async def _settle(client: Any) -> None:
    """Say the configuration is complete (an empty ``box_init``), so a Box that no host
    has configured does not wait for one before the first command."""
    from langbot_plugin.rpc import RPCError

    try:
        await client.init({})
    except RPCError:
        pass  # a Box that takes its configuration from its host only: it decides


async def _exec(client: Any, args: argparse.Namespace) -> int:
    await _settle(client)
    given = {"image": args.image, "workdir": args.workdir, "timeout_sec": args.timeout}
    fields = {key: value for key, value in given.items() if value not in (None, "")}
    if args.network:
        fields["network"] = "on"
    result = await client.exec(session_id=args.session, cmd=args.cmd, **fields)
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    if result.stdout_truncated or result.stderr_truncated:
        sys.stderr.write("lbp box exec: the output was cut (the Box keeps its head and tail)\n")
    if result.exit_code is None:
        sys.stderr.write(f"lbp box exec: the command ended {result.status.value}\n")
        return 1
    return int(result.exit_code)


async def _ls(client: Any, args: argparse.Namespace) -> int:
    await _settle(client)
    result = await client.exec(session_id=args.session, cmd=shlex.join(["ls", "-la", args.path]))
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    return 0 if result.exit_code == 0 else 1


async def _sessions(client: Any, args: argparse.Namespace) -> int:
    sessions = await client.list_sessions()
    if not sessions:
        sys.stdout.write("no sessions\n")
        return 0
    rows = [("SESSION", "BACKEND", "IMAGE", "STATUS", "PROCESSES", "LAST USED")]
    for s in sessions:
        used = s.last_used_at.isoformat(timespec="seconds")
        status = s.status.value
        row = (s.session_id, s.backend_name, s.image, status, str(s.managed_process_count), used)
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        sys.stdout.write("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        sys.stdout.write("\n")
    return 0


async def _status(client: Any, args: argparse.Namespace) -> int:
    backend = await client.backend_info()
    status = await client.status()
    state = "ready" if backend.available else f"not ready: {backend.reason}"
    sys.stdout.write(f"backend: {backend.name or 'none'} ({state})\n")
    for key, value in status.model_dump(mode="json").items():
        if not isinstance(value, dict | list):
            sys.stdout.write(f"{key}: {value}\n")
    return 0 if backend.available else 1


async def _rm(client: Any, args: argparse.Namespace) -> int:
    for session in args.sessions:
        await client.delete_session(session)
        sys.stdout.write(f"deleted {session}\n")
    return 0


ACTIONS: dict[str, Callable[[Any, argparse.Namespace], Awaitable[int]]] = {
    "exec": _exec,
    "ls": _ls,
    "sessions": _sessions,
    "status": _status,
    "rm": _rm,
}
