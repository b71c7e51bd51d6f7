"""Every spec declared in ``langbot_plugin/protocol/`` is in the catalogue.

The catalogue is assembled from hand-kept tuples (``HOST_API``, ``COMPONENT_CALLS``,
``CONTROL_ACTIONS``...). A spec declared but left out of them is in no docs, no action
enum and, for a plugin -> host action, no forwarding table: the recipes of
docs/architecture.md ("Adding an action") name the tuple each spec goes in, and this
test fails for one that was forgotten.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any, cast

from langbot_plugin import protocol
from langbot_plugin.protocol.catalogue import CATALOGUE
from langbot_plugin.protocol.spec import ActionSpec


def declared() -> dict[str, ActionSpec[Any, Any]]:
    """``module.NAME`` -> spec, for each module-level spec (and each in a module-level
    tuple, list or dict) of the protocol package."""
    found: dict[str, ActionSpec[Any, Any]] = {}
    for info in pkgutil.walk_packages(protocol.__path__, f"{protocol.__name__}."):
        module = importlib.import_module(info.name)
        for attribute, value in vars(module).items():
            if isinstance(value, dict):
                items = list(cast(dict[object, object], value).values())
            elif isinstance(value, tuple | list):
                items = list(cast(tuple[object, ...], value))
            else:
                items = [value]
            for item in items:
                if isinstance(item, ActionSpec):
                    found.setdefault(f"{info.name}.{attribute}:{item.name}", item)
    return found


def test_every_declared_spec_is_catalogued() -> None:
    specs = declared()
    assert len(specs) > 100
    catalogued = {id(spec) for spec in CATALOGUE}
    assert [where for where, spec in specs.items() if id(spec) not in catalogued] == []
