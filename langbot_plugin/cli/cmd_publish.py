"""``lbp publish``: build the plugin and submit it to the LangBot marketplace."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from langbot_plugin.cli.common import CliError, guarded

PROG = "lbp publish"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Build the plugin in this folder (as lbp build) and upload it to the marketplace "
            "of the cloud service (CLOUD_SERVICE_URL). Needs lbp login first."
        ),
    )
    parser.add_argument("-d", "--dir", type=Path, default=Path("."), help="plugin folder (.)")
    parser.add_argument("-o", "--output", type=Path, help="keep the built package in this folder")
    parser.add_argument("--package", type=Path, help="upload this .lbpkg instead of building")
    parser.add_argument("-c", "--changelog", default="", help="what changed in this version")
    parser.add_argument("--changelog-file", type=Path, help="read the changelog from a file")
    parser.add_argument("--server", help="cloud service URL (overrides CLOUD_SERVICE_URL)")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    return guarded(PROG, lambda: _publish(args))


def _changelog(args: argparse.Namespace) -> str:
    if args.changelog_file is None:
        return str(args.changelog)
    if args.changelog:
        raise CliError("give --changelog or --changelog-file, not both")
    try:
        return Path(args.changelog_file).read_text(encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot read the changelog: {exc}") from None


def _publish(args: argparse.Namespace) -> int:
    import tempfile

    from langbot_plugin.cli.cloud import CloudClient, CredentialStore, server_url
    from langbot_plugin.cli.cloud import valid_access_token as token_for

    changelog = _changelog(args)
    client = CloudClient(server_url(args.server))
    token = token_for(client, CredentialStore())  # before building: fail fast when logged out

    with tempfile.TemporaryDirectory(prefix="lbp-publish-") as scratch:
        if args.package is not None:
            package = Path(args.package)
            if not package.is_file():
                raise CliError(f"{package} does not exist")
        else:
            from langbot_plugin.cli.packaging import build_package

            output = Path(args.output) if args.output is not None else Path(scratch)
            package = build_package(Path(args.dir), output).path
            sys.stdout.write(f"built {package.name}\n")
        answer = client.post_multipart(
            "marketplace/plugins/publish",
            fields={"changelog": changelog},
            file_field="file",
            file_path=package,
            token=token,
        )
    if answer.get("code") != 0:
        raise CliError(f"the marketplace refused {package.name}: {answer.get('msg')}", 1)
    data = answer.get("data")
    submission = data.get("submission") if isinstance(data, dict) else None
    status = submission.get("status") if isinstance(submission, dict) else None
    if status == "draft":
        sys.stdout.write(
            f"submitted {package.name} as a new plugin; finish its marketplace page at "
            f"{client.server}\n"
        )
    else:
        sys.stdout.write(f"published {package.name} to {client.server}\n")
    return 0
