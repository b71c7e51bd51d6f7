"""``lbp ver``: print the installed SDK version."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str]) -> int:
    argparse.ArgumentParser(prog="lbp ver", description="Print the SDK version.").parse_args(argv)
    from langbot_plugin import __version__

    sys.stdout.write(f"langbot-plugin {__version__}\n")
    return 0
