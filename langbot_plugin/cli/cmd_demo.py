"""``lbp demo``: start the daemons and drive the example AgentRunner end to end."""

from __future__ import annotations

import argparse


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="lbp demo",
        description="Start lbp rt (and lbp box), install the example plugin and drive it.",
    )
    parser.add_argument("--keep", action="store_true", help="keep the working folder and logs")
    args = parser.parse_args(argv)
    from langbot_plugin.demo import main as run

    return run(keep=args.keep)
