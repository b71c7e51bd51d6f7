"""``lbp login``: sign in to the LangBot cloud service, for ``lbp publish``."""

from __future__ import annotations

import argparse
import sys

from langbot_plugin.cli.common import CliError, guarded

PROG = "lbp login"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Sign in to the LangBot cloud service (CLOUD_SERVICE_URL, default "
            "https://space.langbot.app): confirm a one-time code in the browser, or pass a "
            "personal access token. Credentials are stored in ~/.langbot/cli/config.json."
        ),
    )
    parser.add_argument(
        "-t",
        "--token",
        help="a personal access token (lbpat_...); '-' reads it from stdin",
    )
    parser.add_argument("--server", help="cloud service URL (overrides CLOUD_SERVICE_URL)")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    return guarded(PROG, lambda: _login(args))


def _show(user_code: str, url: str, expires_in: int) -> None:
    sys.stdout.write(
        f"Open {url}\nand confirm the code {user_code} (valid {expires_in // 60} min "
        f"{expires_in % 60} s).\nWaiting for the confirmation...\n"
    )
    sys.stdout.flush()


def _login(args: argparse.Namespace) -> int:
    import time

    from langbot_plugin.cli.cloud import (
        PAT_PREFIX,
        CloudClient,
        Credentials,
        CredentialStore,
        device_login,
        server_url,
    )

    server = server_url(args.server)
    store = CredentialStore()
    if args.token is not None:
        token = str(args.token)
        if token == "-":
            token = sys.stdin.readline().strip()
        if not token.startswith(PAT_PREFIX):
            raise CliError(f"a personal access token starts with {PAT_PREFIX!r}")
        personal = Credentials(token, "personal_access_token", login_time=int(time.time()))
        store.put(server, personal)
        sys.stdout.write(f"stored the personal access token for {server} in {store.path}\n")
        return 0
    credentials = device_login(CloudClient(server), _show)
    store.put(server, credentials)
    sys.stdout.write(f"logged in to {server}; credentials stored in {store.path}\n")
    return 0
