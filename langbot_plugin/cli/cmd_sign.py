"""``lbp sign PACKAGE --key FILE``: sign a ``.lbpkg`` with an Ed25519 key (in its ZIP
comment; the files are not touched)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from langbot_plugin.cli.common import USAGE, CliError, Parser, guarded

PROG = "lbp sign"


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG,
        description=(
            "Sign a plugin package with a private key of 'lbp keys generate'. A plugin that "
            "declares the shared runtime gets a certification envelope (the one LangBot reads "
            "for shared placement); any other plugin a signature envelope, which LangBot "
            "admits exactly like an unsigned package and 'lbp rt --signature-policy' checks. "
            "An earlier signature is replaced."
        ),
    )
    parser.add_argument("package", type=Path, metavar="PACKAGE", help="the .lbpkg to sign")
    parser.add_argument(
        "--key", type=Path, required=True, metavar="FILE", help="the private key (PEM)"
    )
    parser.add_argument(
        "--key-id",
        metavar="ID",
        help="the key id to name (default: the one 'lbp keys generate' printed, derived "
        "from the key)",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="FILE",
        help="write the signed package here (default: sign PACKAGE in place)",
    )
    return parser


def read_package(path: Path) -> bytes:
    """The package's bytes; a missing one is bad input (exit 2)."""

    if not path.is_file():
        raise CliError(f"{path} is not a file", USAGE)
    return path.read_bytes()


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)

    def body() -> int:
        from langbot_plugin.certification import EnvelopeFormatError, read_envelope, sign_archive
        from langbot_plugin.signing_keys import KeyFormatError, load_private_key

        content = read_package(args.package)
        try:
            key = load_private_key(args.key)
        except KeyFormatError as exc:
            raise CliError(str(exc), USAGE) from None
        if args.key.stat().st_mode & 0o077:
            sys.stderr.write(f"{PROG}: warning: {args.key} is readable by others (chmod 600)\n")
        key_id: str = args.key_id or key.key_id
        try:
            signed = sign_archive(content, key_id, key.signer)
        except EnvelopeFormatError as exc:
            raise CliError(f"cannot sign {args.package}: {exc}", USAGE) from None
        target: Path = args.output or args.package
        staging = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        staging.write_bytes(signed)
        staging.replace(target)
        envelope = read_envelope(signed)
        assert envelope is not None
        plugin = f"{envelope.plugin_id['author']}/{envelope.plugin_id['name']}"
        sys.stdout.write(
            f"signed {target}: {plugin} {envelope.version}, key {key_id} ({envelope.schema})\n"
        )
        return 0

    return guarded(PROG, body)
