"""Loading a plugin folder into the test's own process, and forgetting it afterwards.

A plugin's modules have short top-level names (``main``, ``components``), so two
plugin folders cannot be imported into one process at the same time. The harness
imports the folder the way the worker does, refuses when another folder's modules of
the same names are loaded, and on exit forgets exactly the modules it imported (the
test's own modules, which may live in the plugin folder, stay).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

from langbot_plugin.api.definition.validation import check_plugin
from langbot_plugin.testing.errors import HarnessError
from langbot_plugin.worker.hot_reload import ReloadError
from langbot_plugin.worker.loader import LoadedPlugin

__all__ = ["PluginModules", "load_plugin_here"]


def _top_names(loaded: LoadedPlugin) -> set[str]:
    paths: list[str] = []
    execution = loaded.package.manifest.execution
    if execution is not None:
        paths.append(execution.python.path)
    paths.extend(c.manifest.module_path or "" for c in loaded.components)
    return {p.split("/", 1)[0].removesuffix(".py") for p in paths if p}


class PluginModules:
    """Remembers ``sys.modules`` and ``sys.path`` on entry; on exit removes the
    modules imported from ``root`` since then, and the path entry the loader added."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._before: set[str] = set()
        self._path_had_root = False

    def __enter__(self) -> PluginModules:
        self._before = set(sys.modules)
        self._path_had_root = str(self.root) in sys.path
        return self

    def __exit__(self, *exc_info: object) -> None:
        ours = [n for n in sys.modules if n not in self._before and self._inside(sys.modules[n])]
        for name in ours:  # decided first: a namespace path reads its parent's entry
            del sys.modules[name]
        if not self._path_had_root and str(self.root) in sys.path:
            sys.path.remove(str(self.root))
        importlib.invalidate_caches()

    def _inside(self, module: ModuleType) -> bool:
        """Whether ``module`` was loaded from this folder; a namespace package (a
        folder without ``__init__.py``, such as ``components/``) has only a path."""
        places = [getattr(module, "__file__", None), *list(getattr(module, "__path__", None) or [])]
        return any(p and Path(p).resolve().is_relative_to(self.root) for p in places)

    def clashes(self, names: set[str]) -> list[str]:
        """Modules of those top-level names already imported from another folder."""
        found: list[str] = []
        for name in names:
            module = sys.modules.get(name)
            if module is not None and not self._inside(module):
                where = getattr(module, "__file__", None) or list(getattr(module, "__path__", []))
                found.append(f"{name} ({where})")
        return found


def load_plugin_here(root: Path, modules: PluginModules) -> LoadedPlugin:
    """The folder checked as the runtime checks it and imported into this process."""
    _, problems = check_plugin(root)
    if problems:
        raise HarnessError(f"{root} cannot be loaded:\n{ReloadError(root, problems).block()}")
    loaded = LoadedPlugin(root)
    clashes = modules.clashes(_top_names(loaded))
    if clashes:
        raise HarnessError(
            f"another plugin's modules are loaded in this process: {', '.join(clashes)}; "
            "close its PluginHarness first, or use PluginHarness(..., process=True)"
        )
    try:
        loaded.preload()
    except Exception as exc:
        raise HarnessError(f"{root} cannot be imported: {type(exc).__name__}: {exc}") from exc
    return loaded
