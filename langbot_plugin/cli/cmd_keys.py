"""``lbp keys generate``: an Ed25519 key pair for signing plugin packages (``lbp sign``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from langbot_plugin.cli.common import USAGE, CliError, Parser, guarded

PROG = "lbp keys"
DEFAULT_KEY = Path("lbp-signing.key")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG,
        description="Keys for signed plugin packages (docs/security.md, 'Signed packages').",
    )
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", title="commands", parser_class=Parser
    )
    generate = commands.add_parser(
        "generate",
        help="write a new Ed25519 key pair",
        description=(
            "Write a new Ed25519 private key (PEM, mode 0600, never printed) and, beside it "
            "with the suffix .pub, its public key as a key ring line 'KEY_ID: BASE64' (the "
            "form of LangBot's plugin.certification.trusted_public_keys). Existing files are "
            "never overwritten."
        ),
    )
    generate.add_argument(
        "-o",
        "--output",
        type=Path,
        default=DEFAULT_KEY,
        metavar="FILE",
        help=f"the private key file (default {DEFAULT_KEY}); the public key goes beside it, "
        "its suffix replaced by .pub",
    )
    return parser


def main(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.error("choose a command: generate")

    def body() -> int:
        from langbot_plugin.signing_keys import generate_key, public_text, write_private_key

        private: Path = args.output
        public = private.with_suffix(".pub")
        if public == private:
            raise CliError(f"{private}: the private key's name must not end in .pub", USAGE)
        for path in (private, public):
            if path.exists() or path.is_symlink():
                raise CliError(f"{path} exists; not overwritten (remove it or choose -o)", USAGE)
        key = generate_key()
        line = f"{key.key_id}: {public_text(key.public)}\n"
        write_private_key(key, private)
        public.write_text(line, encoding="utf-8")
        sys.stdout.write(
            f"private key: {private} (mode 0600: keep it secret)\npublic key:  {public}\n{line}"
        )
        return 0

    return guarded(f"{PROG} generate", body)
