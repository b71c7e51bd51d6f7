"""Logging set-up shared by the daemons: human-readable lines on stderr."""

from __future__ import annotations

import logging
import os
import sys

__all__ = ["setup_logging"]


def setup_logging(level: str | None = None) -> None:
    chosen = (level or os.environ.get("LBP_LOG_LEVEL") or "INFO").upper()
    logging.basicConfig(
        level=getattr(logging, chosen, logging.INFO),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
    )
    for noisy in ("websockets", "asyncio", "docker", "urllib3"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
