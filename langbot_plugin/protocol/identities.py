"""The rule for a plugin's ``metadata.author`` and ``metadata.name``.

An identity becomes part of folder names, storage keys (``author/name`` owns a plugin's
storage at the host) and log labels, so only what is unsafe there is refused: the
empty name, whitespace around it, more than 128 characters, ``/`` and ``\\`` (path
separators), ``.`` and ``..``, the characters Windows forbids in file names
(``< > : " | ? *``), and control, format and other invisible characters (NUL, line
breaks, bidirectional overrides). Anything else the reference accepts is accepted:
spaces (``LangBot Developer``), CJK and other scripts, punctuation such as ``.``
inside a name.
"""

from __future__ import annotations

import unicodedata

__all__ = ["IDENTITY_MAX_LENGTH", "identity_problem"]

IDENTITY_MAX_LENGTH = 128
_FORBIDDEN = frozenset('/\\<>:"|?*')
#: Unicode categories of characters that cannot be seen or that break lines.
_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def identity_problem(value: object) -> str | None:
    """Why ``value`` cannot be a plugin author or name (``None`` when it can)."""
    if not isinstance(value, str) or not value.strip():
        return "must not be empty"
    if value != value.strip():
        return "must not start or end with whitespace"
    if len(value) > IDENTITY_MAX_LENGTH:
        return f"must be at most {IDENTITY_MAX_LENGTH} characters"
    if value in (".", ".."):
        return "must not be '.' or '..'"
    for char in value:
        if char in _FORBIDDEN:
            return f"must not contain {char!r} (unsafe in a folder name)"
        if unicodedata.category(char) in _INVISIBLE:
            return f"must not contain the control or invisible character U+{ord(char):04X}"
    return None
