"""Run every ``bench/<name>.py`` that defines ``main() -> int``, or only the names given."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import bench


def main(argv: list[str]) -> int:
    names = argv or sorted(m.name for m in pkgutil.iter_modules(bench.__path__))
    status = 0
    for name in names:
        module = importlib.import_module(f"bench.{name}")
        entry = getattr(module, "main", None)
        if entry is None:
            continue
        print(f"== bench.{name}", flush=True)
        status |= int(entry([]))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
