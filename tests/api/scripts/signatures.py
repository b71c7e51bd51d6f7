"""Dump the parameters of the plugin API's public callables, and the public event classes,
with whichever ``langbot_plugin`` this interpreter imports.

The same script runs under our venv and under the reference 0.7.18 venv. Reads a JSON
surface on stdin (``{"modules": {name: {"names": [...], "classes": {cls: [members]}}}}``,
the pinned ``surface-0.7.18.json``) and prints::

    {"callables": {"module:Qualified.name": [[param, kind, has_default], ...] | null},
     "eba_events": [names of EBAEvent.__subclasses__()]}

``kind`` is :class:`inspect.Parameter` kind's name. A method's ``self`` is left out (a
classmethod's ``cls`` too); ``null`` means the callable has no signature Python can
read. Classes are listed as their constructor. Only the standard library and the
package are imported.
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
from typing import Any


def _params(target: Any, *, drop_first: bool) -> list[list[Any]] | None:
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    found = [
        [p.name, p.kind.name, p.default is not inspect.Parameter.empty]
        for p in signature.parameters.values()
    ]
    return found[1:] if drop_first and found else found


def _ours(value: Any) -> bool:
    module = getattr(value, "__module__", None)
    return isinstance(module, str) and module.split(".")[0] == "langbot_plugin"


def _member(cls: type, name: str) -> list[list[Any]] | bool | None:
    """The parameters of ``cls.name``; ``False`` when it is not a callable member."""
    try:
        static = inspect.getattr_static(cls, name)
    except AttributeError:
        return False
    if isinstance(static, staticmethod):
        return _params(getattr(cls, name), drop_first=False)
    if isinstance(static, classmethod):
        return _params(getattr(cls, name), drop_first=False)  # bound: no cls
    if inspect.isfunction(static):
        return _params(static, drop_first=True)
    return False


def dump(surface: dict[str, Any]) -> dict[str, Any]:
    callables: dict[str, Any] = {}
    for module_name, entry in sorted(surface["modules"].items()):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for name in entry["names"]:
            value = getattr(module, name, None)
            if inspect.isfunction(value) and _ours(value):
                callables[f"{module_name}:{name}"] = _params(value, drop_first=False)
        for class_name, members in entry["classes"].items():
            cls = getattr(module, class_name, None)
            if not inspect.isclass(cls):
                continue
            if not _is_enum(cls):
                callables[f"{module_name}:{class_name}"] = _params(cls, drop_first=False)
            for member in members:
                found = _member(cls, member)
                if found is not False:
                    callables[f"{module_name}:{class_name}.{member}"] = found
    from langbot_plugin.api.entities.builtin.platform import events

    return {
        "callables": callables,
        "eba_events": sorted(c.__name__ for c in events.EBAEvent.__subclasses__()),
    }


def _is_enum(cls: type) -> bool:
    import enum

    return issubclass(cls, enum.Enum)


if __name__ == "__main__":
    json.dump(dump(json.load(sys.stdin)), sys.stdout)
