"""Checking a plugin folder the way the runtime would, without running its code.

:func:`check_plugin` returns every :class:`Problem` found: those of discovery
(manifests, kinds, versions, names, paths; see :mod:`.discovery`) and those of the
code each manifest points to: the Python file exists, compiles (a syntax error is
named with its file and line) and defines the entry class named by ``attr`` at the
top level, and a class that subclasses the SDK's base directly defines that base's
abstract methods (a Tool without ``call`` cannot be created). Plugin code is parsed,
never imported, so a check runs nothing of the
plugin and needs none of its dependencies. ``lbp build`` (and ``lbp build --check``)
and the runtime's install path call this one function.
"""

from __future__ import annotations

import ast
from pathlib import Path

from pydantic import ValidationError

from langbot_plugin.api.definition.components.kinds import KINDS, kinds_sharing
from langbot_plugin.api.definition.components.manifest import ComponentManifest
from langbot_plugin.api.definition.discovery import PluginPackage, read_plugin
from langbot_plugin.api.definition.yaml_document import Problem

__all__ = ["abstract_message", "abstract_methods", "check_code", "check_plugin", "missing_abstract"]

#: The class an entry point of each kind must subclass (checked when visible in the code).
ENTRY_BASES = {"Plugin": "BasePlugin", **{name: k.base.__name__ for name, k in KINDS.items()}}


def abstract_methods(kind: str) -> tuple[str, ...]:
    """The abstract methods of ``kind``'s base class."""
    entry = KINDS.get(kind)
    return entry.abstract_methods if entry is not None else ()


#: The SDK bases a component class of each kind may name, by class name (``AgentRunner``
#: or ``Runner`` for either runner kind).
BASE_CLASSES: dict[str, dict[str, type]] = {
    name: {KINDS[other].cls.__name__: KINDS[other].cls for other in kinds_sharing(name)}
    for name in KINDS
}


def _base_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def missing_abstract(node: ast.ClassDef, kind: str) -> list[str]:
    """The abstract methods of ``kind``'s base that class ``node`` does not define, when
    it subclasses that base directly (through a class of its own it may inherit them)."""
    classes = BASE_CLASSES.get(kind, {})
    if not node.bases or node.keywords:
        return []
    named = [classes.get(_base_name(base) or "") for base in node.bases]
    if any(base is None for base in named):
        return []
    # What the named bases leave abstract: ``Runner`` has a default ``run`` (its
    # callbacks), ``AgentRunner`` does not.
    required = sorted({method for base in named if base for method in base.__abstractmethods__})
    if not required:
        return []
    defined: dict[str, ast.stmt] = {}
    if not _bindings(node.body, defined):
        return []
    return [name for name in required if name not in defined]


def _bindings(body: list[ast.stmt], names: dict[str, ast.stmt]) -> bool:
    """Collect names bound at module level into ``names``; False after ``import *``."""
    for node in body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            names[node.name] = node
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name):
                        names[leaf.id] = node
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    return False
                names[alias.asname or alias.name.split(".")[0]] = node
        elif isinstance(node, ast.If | ast.Try | ast.With | ast.AsyncWith):
            blocks: list[list[ast.stmt]] = [node.body]
            if isinstance(node, ast.If | ast.Try):
                blocks.append(node.orelse)
            if isinstance(node, ast.Try):
                blocks.append(node.finalbody)
                blocks.extend(handler.body for handler in node.handlers)
            if not all(_bindings(block, names) for block in blocks):
                return False
    return True


def _entry_problem(
    tree: ast.Module, attr: str, kind: str, code_file: str
) -> tuple[str, int | None] | None:
    """What is wrong with the entry class, and its line in the code when the class
    itself is where to look (``None``: the manifest's ``attr`` line is)."""
    names: dict[str, ast.stmt] = {}
    if not _bindings(tree.body, names):
        return None  # ``from x import *`` may define it; the import decides
    node = names.get(attr)
    if node is None:
        return f"execution.python.attr {attr!r} is not defined in {code_file}", None
    if isinstance(node, ast.ClassDef) and not node.bases and not node.keywords:
        base = ENTRY_BASES.get(kind, "the component base class")
        return f"{attr} in {code_file} must be a subclass of {base}", None
    if isinstance(node, ast.ClassDef) and (missing := missing_abstract(node, kind)):
        return abstract_message(attr, missing, kind), node.lineno
    return None


def abstract_message(attr: str, missing: list[str], kind: str) -> str:
    """One line for a component class that does not define its base's abstract methods."""
    names = " and ".join(missing)
    which = "methods" if len(missing) > 1 else "method"
    return f"{attr} does not define {names}, the abstract {which} every {kind} must have"


def _attr_line(package: PluginPackage, manifest: ComponentManifest) -> int | None:
    document = package.document(manifest.rel_path)
    return None if isinstance(document, Problem) else document.line("execution", "python", "attr")


def _check_entry(
    package: PluginPackage, manifest: ComponentManifest, problems: list[Problem]
) -> None:
    code_file = manifest.module_path
    execution = manifest.execution
    if code_file is None or execution is None:
        return
    path = package.root / code_file
    if not path.is_file():
        problems.append(
            Problem(manifest.rel_path, None, f"needs {code_file}, which does not exist")
        )
        return
    try:
        source = path.read_bytes()
        tree = ast.parse(source, filename=code_file)
        compile(tree, code_file, "exec", dont_inherit=True)
    except SyntaxError as exc:
        problems.append(Problem(code_file, exc.lineno, f"syntax error: {exc.msg}"))
        return
    except (OSError, ValueError) as exc:
        problems.append(Problem(code_file, None, f"cannot be compiled: {exc}"))
        return
    attr = execution.python.attr
    found = _entry_problem(tree, attr, manifest.kind, code_file)
    if found is not None:
        message, line = found
        if line is not None:
            problems.append(Problem(code_file, line, message))
        else:
            problems.append(Problem(manifest.rel_path, _attr_line(package, manifest), message))


def check_code(package: PluginPackage) -> list[Problem]:
    """Problems of the code the manifests of ``package`` point to."""
    problems: list[Problem] = []
    checked: set[tuple[str, str]] = set()
    for manifest in [package.manifest, *package.components]:
        try:
            execution = manifest.execution
        except ValidationError:
            continue  # discovery named what is wrong with it
        key = (manifest.module_path or "", execution.python.attr if execution else "")
        if key in checked:
            continue
        checked.add(key)
        _check_entry(package, manifest, problems)
    return problems


def check_plugin(root: Path) -> tuple[PluginPackage | None, list[Problem]]:
    """Read the plugin in ``root`` and check everything the runtime would refuse."""
    package, problems = read_plugin(root)
    if package is not None:
        problems.extend(check_code(package))
    return package, problems
