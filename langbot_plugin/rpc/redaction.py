"""Secrets kept out of logs, stored records and error messages: the one redactor.

Replaced by ``[redacted]``: values marked with :func:`mark_secret` (a host's secrets,
config fields declared ``type: secret``; at least :data:`MIN_SECRET_CHARS`, at most
:data:`MAX_SECRETS` kept) and well-known key shapes (:data:`PATTERNS`). It applies to
every log record of the worker and the runtime (:class:`RedactingFilter`), the plugin
output the runtime keeps, every error that crosses the wire, and the host's stores;
never to the live answer a runner streams. The redactor is process-wide
(:data:`REDACTOR`; docs/security.md).
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any

__all__ = [
    "MAX_SECRETS",
    "MIN_SECRET_CHARS",
    "PATTERNS",
    "REDACTED",
    "REDACTOR",
    "RedactingFilter",
    "Redactor",
    "mark_secret",
    "redact",
    "redact_data",
]

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 6
MAX_SECRETS = 4096

#: Key shapes redacted wherever they appear. Groups named ``keep`` survive.
PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"(?P<keep>\bBearer\s+)[A-Za-z0-9._~+/\-]{8,}=*", re.IGNORECASE),
    re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    re.compile(r"\bxox[abeprs]-[A-Za-z0-9\-]{10,}"),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"),
    re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?P<keep>://[^/\s:@]+:)[^/\s@]+(?=@)"),
    re.compile(
        r"(?P<keep>\b(?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|secret[_-]?key"
        r"|client[_-]?secret|password|passwd|secret|token)\b[\"']?\s*[:=]\s*[\"']?)"
        r"[^\s\"',;&}]{6,}",
        re.IGNORECASE,
    ),
)
#: For each pattern, substrings of the lowercased text without which it cannot match
#: (a cheap test that spares the regex scan of ordinary text).
_TRIGGERS: tuple[tuple[str, ...], ...] = (
    ("private key",),
    ("sk-",),
    ("bearer",),
    ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ("xox",),
    ("akia", "asia"),
    ("aiza",),
    ("eyj",),
    ("://",),
    ("key", "token", "secret", "passw"),
)

_GUARDED = tuple(zip(PATTERNS, _TRIGGERS, strict=True))


def _replace(match: re.Match[str]) -> str:
    keep = match.groupdict().get("keep")
    return f"{keep}{REDACTED}" if keep else REDACTED


class Redactor:
    """Marked values and :data:`PATTERNS`, replaced in text and in JSON-like data."""

    def __init__(self) -> None:
        self._values: dict[str, None] = {}  # insertion-ordered: the oldest go first
        self._lock = threading.Lock()
        self._compiled: re.Pattern[str] | None = None

    def mark(self, *values: object) -> None:
        """Treat each string value (of at least :data:`MIN_SECRET_CHARS`) as a secret."""
        added = False
        with self._lock:
            for value in values:
                if not isinstance(value, str) or len(value) < MIN_SECRET_CHARS:
                    continue
                if value not in self._values:
                    self._values[value] = None
                    added = True
            while len(self._values) > MAX_SECRETS:
                del self._values[next(iter(self._values))]
            if added:
                self._compiled = None

    def _marked(self) -> re.Pattern[str] | None:
        compiled = self._compiled
        if compiled is None and self._values:
            with self._lock:
                ordered = sorted(self._values, key=len, reverse=True)
                compiled = self._compiled = re.compile("|".join(map(re.escape, ordered)))
        return compiled

    def redact(self, text: str) -> str:
        """``text`` with every secret replaced."""
        marked = self._marked()
        if marked is not None:
            text = marked.sub(REDACTED, text)
        lowered = text.lower()
        for pattern, triggers in _GUARDED:
            for trigger in triggers:  # a plain loop: a generator per pattern cost ~1 us
                if trigger in lowered:
                    text = pattern.sub(_replace, text)
                    break
        return text

    def redact_data(self, value: Any) -> Any:
        """A copy of JSON-like ``value`` (dicts, lists, strings) with secrets replaced in
        every string; a key named like a secret (``api_key``, ``password`` ...) has its
        string value replaced whole."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            out: dict[Any, Any] = {}
            for key, item in value.items():  # pyright: ignore[reportUnknownVariableType]
                if isinstance(item, str) and isinstance(key, str) and _secret_key(key) and item:
                    out[key] = REDACTED
                else:
                    out[key] = self.redact_data(item)
            return out
        if isinstance(value, list | tuple):
            return [self.redact_data(item) for item in value]  # pyright: ignore[reportUnknownVariableType]
        return value


_SECRET_KEY = re.compile(
    r"(?:^|[_\-.])(?:api[_-]?key|apikey|password|passwd|secret|token|authorization|credentials?)"
    r"$",
    re.IGNORECASE,
)


def _secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(key))


#: The process-wide redactor every sink uses.
REDACTOR = Redactor()


def mark_secret(*values: object) -> None:
    """Mark values secret in :data:`REDACTOR`."""
    REDACTOR.mark(*values)


def redact(text: str) -> str:
    """``text`` with every secret :data:`REDACTOR` knows replaced."""
    return REDACTOR.redact(text)


def redact_data(value: Any) -> Any:
    """JSON-like ``value`` with every secret :data:`REDACTOR` knows replaced."""
    return REDACTOR.redact_data(value)


class RedactingFilter(logging.Filter):
    """Redacts a record's message and traceback before any handler formats it."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            return True
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True
