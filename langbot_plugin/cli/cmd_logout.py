"""``lbp logout``: forget the stored login for the cloud service."""

from __future__ import annotations

import argparse
import sys

from langbot_plugin.cli.common import guarded

PROG = "lbp logout"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Remove the credentials stored for the cloud service (CLOUD_SERVICE_URL) from "
            "~/.langbot/cli/config.json; logins to other servers stay."
        ),
    )
    parser.add_argument("--server", help="cloud service URL (overrides CLOUD_SERVICE_URL)")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)

    def body() -> int:
        from langbot_plugin.cli.cloud import CredentialStore, server_url

        server = server_url(args.server)
        if CredentialStore().remove(server):
            sys.stdout.write(f"logged out of {server}\n")
        else:
            sys.stdout.write(f"not logged in to {server}; nothing to do\n")
        return 0

    return guarded(PROG, body)
