"""``lbp verify PACKAGE --trusted KEY...``: check a package's signature."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from langbot_plugin.cli.common import FAILURE, USAGE, CliError, Parser, guarded

PROG = "lbp verify"


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG,
        description=(
            "Check a plugin package's signature against trusted public keys, as 'lbp rt "
            "--signature-policy' does at install. Prints 'valid: ...' and exits 0, or one "
            "line with the status (absent, malformed, unsupported_schema, digest_mismatch, "
            "manifest_mismatch, unknown_key, signature_invalid) and exits 1."
        ),
    )
    parser.add_argument("package", type=Path, metavar="PACKAGE", help="the .lbpkg to check")
    parser.add_argument(
        "--trusted",
        nargs="+",
        action="extend",
        default=[],
        metavar="KEY",
        help="trusted public keys: key ring files ('KEY_ID: BASE64' lines, as 'lbp keys "
        "generate' writes) or KEY_ID=BASE64",
    )
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)

    def body() -> int:
        from langbot_plugin.certification import STATUS_REASONS, verify_signature
        from langbot_plugin.cli.cmd_sign import read_package
        from langbot_plugin.signing_keys import KeyFormatError, key_ring, trusted_keys

        content = read_package(args.package)
        try:
            ring = key_ring(trusted_keys(args.trusted))
        except KeyFormatError as exc:
            raise CliError(str(exc), USAGE) from None
        result = verify_signature(content, ring.get)
        envelope = result.envelope
        about = ""
        if envelope is not None:
            plugin = f"{envelope.plugin_id['author']}/{envelope.plugin_id['name']}"
            about = f" ({plugin} {envelope.version}, key {envelope.key_id}, {envelope.schema})"
        if result.status != "valid":
            reason = STATUS_REASONS.get(result.status, result.status)
            raise CliError(f"{args.package}: {result.status}: {reason}{about}", FAILURE)
        sys.stdout.write(f"valid: {args.package}{about}\n")
        return 0

    return guarded(PROG, body)
