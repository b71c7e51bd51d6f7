"""Private module namespaces, so several plugins can live in one worker process.

In a shared worker each plugin (each slot) is imported under its own package prefix,
``lbp_slot_<n>``, whose ``__path__`` is the plugin folder: its ``main.py`` becomes
``lbp_slot_3.main``, its ``components/tools/x.py`` ``lbp_slot_3.components.tools.x``.
Two plugins that both ship ``main.py`` or a ``utils`` package get two module objects.

A plugin that imports its own top-level modules absolutely (``import utils``, ``from
components.helpers import x``) is served by :class:`_AliasFinder`: while a slot is
*active* (during its load and each of its requests) a name whose first part is a file
or folder of that slot's plugin resolves to the prefixed module. The unprefixed names
this leaves in ``sys.modules`` are removed when the slot is left, so the next slot's
``import utils`` finds its own.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import itertools
import sys
from collections.abc import Sequence
from contextvars import ContextVar
from pathlib import Path
from types import ModuleType

__all__ = ["SlotNamespace"]

_counter = itertools.count(1)
_active: ContextVar[SlotNamespace | None] = ContextVar("lbp_active_slot", default=None)


class SlotNamespace:
    """The package prefix of one plugin folder in a shared worker."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.prefix = f"lbp_slot_{next(_counter)}"
        self.aliases: set[str] = set()
        package = ModuleType(self.prefix, f"modules of the plugin in {self.root}")
        package.__path__ = [str(self.root)]
        package.__package__ = self.prefix
        package.__spec__ = importlib.machinery.ModuleSpec(self.prefix, None, is_package=True)
        package.__spec__.submodule_search_locations = [str(self.root)]
        sys.modules[self.prefix] = package
        _AliasFinder.install()

    def owns(self, top_level: str) -> bool:
        """Whether ``top_level`` names a module or package of this plugin's folder."""
        if not top_level.isidentifier():
            return False
        return (self.root / f"{top_level}.py").is_file() or (self.root / top_level).is_dir()

    def import_module(self, dotted: str) -> ModuleType:
        """Import the plugin's module ``dotted`` (relative to its folder), prefixed."""
        return importlib.import_module(f"{self.prefix}.{dotted}")

    def enter(self) -> None:
        """Resolve the plugin's absolute self-imports to this slot in the current context
        (a request's task: it ends with the request; :meth:`drop_aliases` afterwards)."""
        _active.set(self)

    def drop_aliases(self) -> None:
        for name in self.aliases:
            module = sys.modules.get(name)
            if module is not None and module.__name__.startswith(self.prefix + "."):
                del sys.modules[name]
        self.aliases.clear()

    def forget(self) -> None:
        """Remove every module of this slot from ``sys.modules`` (on detach)."""
        self.drop_aliases()
        for name in [n for n in sys.modules if n == self.prefix or n.startswith(self.prefix + ".")]:
            del sys.modules[name]
        importlib.invalidate_caches()


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, namespace: SlotNamespace, fullname: str) -> None:
        self.namespace = namespace
        self.fullname = fullname

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        self.namespace.aliases.add(self.fullname)
        return importlib.import_module(f"{self.namespace.prefix}.{self.fullname}")

    def exec_module(self, module: ModuleType) -> None:
        """The prefixed module is already executed."""


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Maps an active slot's absolute self-imports onto its prefixed modules."""

    _installed = False

    @classmethod
    def install(cls) -> None:
        if not cls._installed:
            sys.meta_path.insert(0, cls())
            cls._installed = True

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        namespace = _active.get()
        if namespace is None or fullname.startswith("lbp_slot_"):
            return None
        if not namespace.owns(fullname.partition(".")[0]):
            return None
        real = importlib.util.find_spec(f"{namespace.prefix}.{fullname}")
        if real is None:
            return None
        spec = importlib.machinery.ModuleSpec(fullname, _AliasLoader(namespace, fullname))
        spec.submodule_search_locations = real.submodule_search_locations
        return spec
