"""Names a module re-exports without importing their modules until first asked for.

A plugin's worker imports the component bases to load the plugin; the models those
modules also offer under the reference's names (contexts, results, errors) are imported
when code first uses them, so a plugin starts without paying for models it never needs.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(module: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` serving the names of ``homes`` (``{home module: "Name
    Other ..."}``; ``.sub``: a submodule of ``module``, a package) from their home; a
    name is then kept in ``module``, so later lookups skip the function."""
    where = {name: home for home, names in homes.items() for name in names.split()}

    def get(name: str) -> Any:
        home = where.get(name)
        if home is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home, module), name)
        setattr(sys.modules[module], name, value)
        return value

    return get
