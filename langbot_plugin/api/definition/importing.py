"""Importing a plugin's Python code by the path its manifest gives.

One importer for the worker (:mod:`langbot_plugin.worker.loader`) and for
:meth:`ComponentManifest.get_python_component_class
<langbot_plugin.api.definition.components.manifest.ComponentManifest.get_python_component_class>`:
a file relative to the plugin folder (``components/tools/echo.py``) is imported as
the dotted module of that path (``components.tools.echo``) with the folder first on
``sys.path``, or through a caller's module importer (a shared worker's private
namespace). :func:`modules_of` and :func:`forget_modules` find and drop what a folder
imported, namespace packages (folders without ``__init__.py``) included.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = [
    "ModuleImporter",
    "forget_modules",
    "import_attribute",
    "import_module_at",
    "module_name",
    "modules_of",
]

#: Imports a dotted module name relative to a plugin folder.
ModuleImporter = Callable[[str], ModuleType]


def module_name(relative_file: str) -> str:
    """The dotted module of a ``.py`` path relative to the plugin folder."""
    path = relative_file[:-3] if relative_file.endswith(".py") else relative_file
    return path.replace("\\", "/").strip("/").replace("/", ".")


def _import_from_folder(root: Path, dotted: str, *, keep_on_path: bool) -> ModuleType:
    folder = str(root)
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        return importlib.import_module(dotted)
    finally:
        # a caller outside the worker gets its sys.path back: a folder left there would
        # shadow modules for everything imported later
        if added and not keep_on_path and folder in sys.path:
            sys.path.remove(folder)


def import_module_at(
    root: Path,
    relative_file: str,
    *,
    importer: ModuleImporter | None = None,
    keep_on_path: bool = True,
) -> ModuleType:
    """The module at ``relative_file`` in the plugin folder ``root``.

    With ``importer`` the dotted name goes to it (nothing touches ``sys.path``);
    otherwise ``root`` is put first on ``sys.path`` for the import and, unless
    ``keep_on_path``, removed again afterwards. Raises what the import raises.
    """
    dotted = module_name(relative_file)
    if importer is not None:
        return importer(dotted)
    return _import_from_folder(root.resolve(), dotted, keep_on_path=keep_on_path)


def import_attribute(
    root: Path,
    relative_file: str,
    attr: str,
    *,
    importer: ModuleImporter | None = None,
    keep_on_path: bool = True,
) -> Any:
    """``attr`` of :func:`import_module_at`'s module; ``AttributeError`` when it has
    none."""
    module = import_module_at(root, relative_file, importer=importer, keep_on_path=keep_on_path)
    try:
        return getattr(module, attr)
    except AttributeError:
        raise AttributeError(f"{relative_file} has no {attr!r}") from None


def _below(paths: Any, root: Path) -> bool:
    # strictly below: a package whose search path is the folder itself is not the
    # plugin's own (a shared worker's slot prefix is such a package)
    resolved = [Path(str(entry)).resolve() for entry in paths or ()]
    return any(p.is_relative_to(root) and p != root for p in resolved)


def modules_of(root: Path) -> dict[str, ModuleType]:
    """The imported modules loaded from inside ``root``: by their file, or, for a
    namespace package (no ``__file__``), by its search path below ``root``."""
    root = root.resolve()
    found: dict[str, ModuleType] = {}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if file:
            if Path(file).resolve().is_relative_to(root):
                found[name] = module
        elif _below(getattr(module, "__path__", None), root):
            found[name] = module
    return found


def forget_modules(root: Path) -> dict[str, ModuleType]:
    """Remove the modules of ``root`` from ``sys.modules`` (so the next import reads the
    files again); returns them, so a failed reload can put them back."""
    removed = modules_of(root)
    for name in removed:
        del sys.modules[name]
    importlib.invalidate_caches()
    return removed
