"""Every exception class of the source is in the error tree the docs show.

docs/errors.md names each class (the plugin API's tree, the daemons' branches, the Box
branch, and what stops a command) and each wire code; the docstrings of
``langbot_plugin.api.errors`` and ``box_runtime.errors`` show their trees. A class added
without its line fails here.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from types import ModuleType

import box_runtime
import box_runtime.errors
import langbot_plugin
import langbot_plugin.api.errors
from langbot_plugin.rpc.errors import RPCError

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")


def _skipped(name: str) -> bool:
    # ``__main__`` runs the CLI when imported; the others are plugin templates and examples
    return name.endswith("__main__") or "._examples" in name or ".templates" in name


def exception_classes() -> list[type[BaseException]]:
    """Each exception class defined in ``langbot_plugin`` or ``box_runtime``."""
    found: dict[str, type[BaseException]] = {}
    packages: tuple[ModuleType, ...] = (langbot_plugin, box_runtime)
    for package in packages:
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if _skipped(info.name):
                continue
            module = importlib.import_module(info.name)
            for value in vars(module).values():
                if (
                    inspect.isclass(value)
                    and issubclass(value, BaseException)
                    and value.__module__ == module.__name__
                ):
                    found[f"{value.__module__}.{value.__qualname__}"] = value
    return list(found.values())


def named(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}\b", text) is not None


def test_the_walk_finds_the_classes_of_every_branch() -> None:
    names = {cls.__name__ for cls in exception_classes()}
    assert {"RPCError", "BoxError", "WorkerError", "StartupError", "CliError"} <= names


def test_every_exception_class_and_code_is_in_the_errors_page() -> None:
    classes = exception_classes()
    assert [c.__qualname__ for c in classes if not named(DOC, c.__qualname__)] == []
    codes = {c.code for c in classes if issubclass(c, RPCError)}
    assert sorted(code for code in codes if f"{code}" not in DOC) == []


def test_a_name_two_classes_share_says_which_module() -> None:
    by_name: dict[str, list[type[BaseException]]] = {}
    for cls in exception_classes():
        by_name.setdefault(cls.__qualname__, []).append(cls)
    shared = {name: group for name, group in by_name.items() if len(group) > 1}
    for group in shared.values():
        # the page names each by its module under the package (``runtime.app``)
        modules = [c.__module__.split(".", 1)[1] for c in group if c.__module__ != "box_runtime"]
        assert [m for m in modules if m not in DOC] == []


def test_the_docstrings_show_their_trees() -> None:
    box_doc = box_runtime.errors.__doc__ or ""
    api_doc = langbot_plugin.api.errors.__doc__ or ""
    for cls in exception_classes():
        if not issubclass(cls, RPCError):
            continue
        if cls.__module__.startswith("box_runtime"):
            assert named(box_doc, cls.__qualname__), cls
        else:
            assert named(api_doc, cls.__qualname__), cls
