"""A bounded buffer of each plugin's log lines, served by ``get_plugin_logs``.

Lines are redacted as they are kept (:mod:`langbot_plugin.rpc.redaction`): ``print``
output bypasses the worker's own log redaction.
"""

from __future__ import annotations

import json
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from langbot_plugin.rpc.redaction import redact

__all__ = ["LEVELS", "LogBuffer", "LogLine"]

LEVELS = {"DEBUG": 10, "INFO": 20, "WARNING": 30, "ERROR": 40, "CRITICAL": 50}
MAX_LINE_CHARS = 8192


@dataclass(frozen=True, slots=True)
class LogLine:
    ts: float
    level: str
    text: str
    #: the plugin a shared worker's record names ("" when not said)
    plugin: str = ""

    def to_wire(self) -> dict[str, Any]:
        return {"ts": self.ts, "level": self.level, "text": self.text}


def parse_line(raw: str) -> LogLine:
    """A worker's JSON log record, or a plain line (``print`` output, crash text)."""
    line = raw.rstrip("\n")
    if line.startswith('{"ts"'):
        try:
            record = json.loads(line)
            level = str(record.get("level", "INFO")).upper()
            text = str(record.get("text", ""))
            logger = record.get("logger")
            if logger and logger != "root":
                text = f"{logger}: {text}"
            plugin = str(record.get("plugin") or "")
            ts = float(record.get("ts", time.time()))
            return LogLine(ts, level, redact(text[:MAX_LINE_CHARS]), plugin)
        except (ValueError, TypeError):
            pass
    return LogLine(time.time(), "INFO", redact(line[:MAX_LINE_CHARS]))


class LogBuffer:
    """The newest ``capacity`` lines of one plugin."""

    def __init__(self, capacity: int = 2000) -> None:
        self._lines: deque[LogLine] = deque(maxlen=capacity)

    def __len__(self) -> int:
        return len(self._lines)

    def add(self, line: LogLine) -> None:
        self._lines.append(line)

    def tail(self, limit: int = 200, level: str | None = None) -> list[LogLine]:
        """The last ``limit`` lines at or above ``level`` (oldest first)."""
        floor = LEVELS.get((level or "").upper(), 0)
        chosen = [line for line in self._lines if LEVELS.get(line.level, 20) >= floor]
        return chosen[-max(0, limit) :] if limit else []
