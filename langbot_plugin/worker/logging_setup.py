"""Worker logging: one JSON object per line on stderr, which the runtime captures.

Each record becomes ``{"ts": <epoch>, "level": "INFO", "logger": name, "text": msg}``;
anything else a plugin writes (``print`` goes to stderr in a worker) is captured as a
plain line. In a shared worker a record made while a slot serves a request (or in a
task that slot started) also carries ``"plugin": "<author>/<name>"``, so the runtime
files it under that plugin.
"""

from __future__ import annotations

import json
import logging
import sys
from contextvars import ContextVar

__all__ = ["JsonLineFormatter", "current_slot_identity", "setup_worker_logging"]

#: The identity of the slot the current task serves, in a shared worker ("" otherwise).
current_slot_identity: ContextVar[str] = ContextVar("lbp_slot_identity", default="")


class JsonLineFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage()
        if record.exc_info:
            text = f"{text}\n{self.formatException(record.exc_info)}"
        payload: dict[str, object] = {
            "ts": record.created,
            "level": record.levelname,
            "logger": record.name,
            "text": text,
        }
        slot = current_slot_identity.get()
        if slot:
            payload["plugin"] = slot
        return json.dumps(payload, ensure_ascii=False)


def setup_worker_logging(level: str = "INFO") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLineFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper(), logging.INFO))
    logging.captureWarnings(True)
