"""Reading ``KEY=VALUE`` lines from a ``.env`` file (comments and quotes allowed)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["load_dotenv"]


def load_dotenv(path: Path) -> dict[str, str]:
    """Set the file's variables in ``os.environ`` unless already set; return them."""
    found: dict[str, str] = {}
    if not path.is_file():
        return found
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        key, value = key.strip(), value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        found[key] = value
        os.environ.setdefault(key, value)
    return found
