"""Worker logging: one JSON object per line on stderr, which the runtime captures.

Each record becomes ``{"ts": <epoch>, "level": "INFO", "logger": name, "text": msg}``;
anything else a plugin writes (``print`` goes to stderr in a worker) is captured as a
plain line.
"""

from __future__ import annotations

import json
import logging
import sys

__all__ = ["JsonLineFormatter", "setup_worker_logging"]


class JsonLineFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage()
        if record.exc_info:
            text = f"{text}\n{self.formatException(record.exc_info)}"
        payload = {
            "ts": record.created,
            "level": record.levelname,
            "logger": record.name,
            "text": text,
        }
        return json.dumps(payload, ensure_ascii=False)


def setup_worker_logging(level: str = "INFO") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLineFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper(), logging.INFO))
    logging.captureWarnings(True)
