"""``lbp build``: package the plugin in this folder as ``<author>-<name>-<version>.lbpkg``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from langbot_plugin.cli.common import guarded

PROG = "lbp build"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Check the plugin and package it as <author>-<name>-<version>.lbpkg (a zip with "
            "manifest.yaml at its root). The checks are those of the runtime (manifests, "
            "component kinds, versions, code that compiles, entry classes) and LangBot's "
            "upload limits; each problem is printed on its own line and the exit status is "
            "2. Files matched by .gitignore are left out, and so are .git, .env, virtual "
            "environments, caches, *.pyc and earlier packages."
        ),
    )
    parser.add_argument("-o", "--output", type=Path, help="output folder (default: <plugin>/dist)")
    parser.add_argument("-d", "--dir", type=Path, default=Path("."), help="plugin folder (.)")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="list the files packaged and skipped"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="only check the plugin (what the runtime and LangBot would refuse); write nothing",
    )
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)

    def body() -> int:
        from langbot_plugin.cli.packaging import build_package, check_package

        root: Path = args.dir
        output: Path = args.output if args.output is not None else root / "dist"
        if args.check:
            plan = check_package(root, output)
            package = plan.package
            _warn(package.warnings)
            sys.stdout.write(
                f"ok: {package.identity} {package.version}, {len(package.components)} "
                f"components, {len(plan.files) + 1} files to package\n"
            )
            return 0
        result = build_package(root, output)
        _warn(result.warnings)
        if args.verbose:
            for name in result.files:
                sys.stdout.write(f"  + {name}\n")
            for name in result.skipped:
                sys.stdout.write(f"  - {name}\n")
        size = result.path.stat().st_size
        sys.stdout.write(f"built {result.path} ({len(result.files)} files, {size} bytes)\n")
        return 0

    return guarded(PROG, body)


def _warn(warnings: Sequence[object]) -> None:
    """What the runtime skips too: a line each on stderr, ``lbp build: warning: ...``."""
    sys.stderr.write("".join(f"{PROG}: warning: {warning}\n" for warning in warnings))
