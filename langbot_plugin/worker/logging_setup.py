"""Worker logging: one JSON object per line on stderr, which the runtime captures.

Each record becomes ``{"ts": <epoch>, "level": "INFO", "logger": name, "text": msg}``;
anything else a plugin writes (``print`` goes to stderr in a worker) is captured as a
plain line. Records are redacted first (:mod:`langbot_plugin.rpc.redaction`). In a shared
worker a record made while a slot serves a request (or in a task that slot started)
also carries ``"plugin": "<author>/<name>"``, so the runtime files it under that plugin.
"""

from __future__ import annotations

import json
import logging
import sys
from contextvars import ContextVar

from langbot_plugin.rpc.redaction import RedactingFilter

__all__ = ["JsonLineFormatter", "current_slot_identity", "setup_worker_logging"]

#: The identity of the slot the current task serves, in a shared worker ("" otherwise).
current_slot_identity: ContextVar[str] = ContextVar("lbp_slot_identity", default="")


class JsonLineFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage()
        if record.exc_info or record.exc_text:
            trace = record.exc_text or self.formatException(record.exc_info)  # type: ignore[arg-type]
            text = f"{text}\n{trace}"
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
    handler.addFilter(RedactingFilter())  # no secret reaches the runtime's plugin logs
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper(), logging.INFO))
    logging.captureWarnings(True)
