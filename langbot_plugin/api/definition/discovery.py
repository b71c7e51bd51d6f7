"""Reading a plugin folder: its ``manifest.yaml`` and the components it declares.

``spec.components`` maps a group name to ``{fromDirs: [{path, maxDepth}], fromFiles:
[path]}``; every YAML found there that is a manifest becomes a component, whatever
the group is called (its own ``kind`` decides what it is). Files are read in path
order, each once. A component manifest is a mapping with ``apiVersion``, ``kind``,
``metadata`` and ``spec`` (the reference's rule); any other YAML file there is not one
and is skipped, with a warning naming the file and line when it looks like one (it
names a ``kind``: an event listener's ``default.yaml`` without ``spec``, as in some of
LangBot's own demo plugins). Nothing else is skipped: a path leaving the plugin folder,
unreadable YAML, an unknown ``kind``, a ``kind: Runner`` without ``spec`` (the
reference refuses it too), a bad ``metadata.version``, an identity that is unsafe as a
folder name or storage key, a component without a name or without code is a
:class:`Problem` naming the file and line. :func:`read_plugin` collects every problem
(and the warnings, in :attr:`PluginPackage.warnings`); :func:`load_plugin` raises the
problems as one :class:`ManifestError`. ``lbp build``, ``lbp run``, the worker and the
runtime's install path all read plugins through here.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Self

from pydantic import ValidationError

from langbot_plugin.api.definition.components.kinds import COMPONENT_KINDS
from langbot_plugin.api.definition.components.manifest import (
    REQUIRED_KEYS,
    ComponentManifest,
    is_manifest,
)
from langbot_plugin.api.definition.yaml_document import Problem, YamlDocument, read_yaml_document
from langbot_plugin.protocol.identities import identity_problem
from langbot_plugin.rpc.errors import RPCError

__all__ = [
    "COMPONENT_KINDS",
    "MANIFEST_FILE",
    "PLUGIN_KIND",
    "VERSION_RULE",
    "ManifestError",
    "PluginPackage",
    "Problem",
    "load_plugin",
    "not_a_plugin_folder",
    "plugin_folder_above",
    "read_plugin",
]

MANIFEST_FILE = "manifest.yaml"
PLUGIN_KIND = "Plugin"
#: ``metadata.version``: digits and dots, then an optional pre-release or build tag
#: (``0.1.0``, ``1.2``, ``2.0.0-beta.1``, ``1.0.0rc1``, ``1.0.0+local``).
VERSION_RULE = re.compile(r"^\d+(\.\d+)*([-+.]?[0-9A-Za-z]+)*$")


def plugin_folder_above(folder: Path) -> Path | None:
    """The nearest of the three folders above ``folder`` that holds a manifest: where a
    command run in ``components/`` (say) should have been run."""
    for parent in list(folder.resolve().parents)[:3]:
        if (parent / MANIFEST_FILE).is_file():
            return parent
    return None


def not_a_plugin_folder(root: Path, command: str | None = None) -> str:
    """The one wording, for every command, of ``root`` having no manifest: the plugin
    folder above it when there is one (and ``lbp COMMAND``'s way there), else that
    ``lbp init`` makes one."""
    above = plugin_folder_above(root)
    if above is None:
        hint = "lbp init makes one"
    elif command is None:
        hint = f"the plugin folder is {above}"
    else:
        hint = f"the plugin folder is {above}: run lbp {command} there or pass --dir {above}"
    return f"no {MANIFEST_FILE} in {root}: not a plugin folder ({hint})"


class ManifestError(RPCError, ValueError):
    """A plugin folder or one of its manifests is not usable; the message says why.

    ``problems`` lists every reason found (one line each); the message joins them.
    """

    code = "manifest_invalid"

    def __init__(
        self,
        message: str = "",
        problems: Iterable[Problem] = (),
        *,
        details: dict[str, Any] | None = None,
    ) -> None:
        self.problems = list(problems) or [Problem("", None, message)]
        super().__init__("; ".join(str(p) for p in self.problems), details=details)

    @classmethod
    def from_wire(
        cls, message: str, *, code: str, details: dict[str, Any] | None, retryable: bool
    ) -> Self:
        return cls(message, details=details)


@dataclass
class PluginPackage:
    root: Path
    manifest: ComponentManifest
    components: list[ComponentManifest] = field(default_factory=list[ComponentManifest])
    #: What was skipped and why (not a problem: the plugin loads without it).
    warnings: list[Problem] = field(default_factory=list[Problem])
    #: The manifests as read, by path in the plugin (for the line of a later problem).
    documents: dict[str, YamlDocument] = field(
        default_factory=dict[str, YamlDocument], repr=False, compare=False
    )

    @property
    def author(self) -> str:
        return str(self.manifest.metadata.get("author") or "")

    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def identity(self) -> str:
        return f"{self.author}/{self.name}"

    @property
    def version(self) -> str:
        return str(self.manifest.metadata.get("version") or "")

    def of_kind(self, *kinds: str) -> list[ComponentManifest]:
        return [c for c in self.components if c.kind in kinds]

    def document(self, rel_path: str) -> YamlDocument | Problem:
        """The manifest at ``rel_path`` as discovery read it (read again if it was not)."""
        known = self.documents.get(rel_path)
        return known if known is not None else read_yaml_document(self.root / rel_path, rel_path)


def _inside(root: Path, relative: str) -> Path | None:
    pure = PurePosixPath(relative.replace("\\", "/"))
    if pure.is_absolute() or ".." in pure.parts:
        return None
    return root / pure


def _candidates(root: Path, doc: YamlDocument, problems: list[Problem]) -> list[Path]:
    components: dict[str, Any] = doc.data["spec"].get("components") or {}
    found: dict[str, Path] = {}
    for group, sources in components.items():
        where = ("spec", "components", str(group))
        if not isinstance(sources, dict):
            problems.append(doc.problem(f"spec.components.{group} must be a mapping", *where))
            continue
        for raw_entry in sources.get("fromDirs") or []:
            entry: Any = {"path": raw_entry} if isinstance(raw_entry, str) else raw_entry
            relative = str(entry.get("path", "")) if isinstance(entry, dict) else ""
            directory = _inside(root, relative)
            if directory is None:
                problems.append(
                    doc.problem(f"{group}: fromDirs path {relative!r} must stay inside", *where)
                )
                continue
            if not directory.is_dir():
                problems.append(doc.problem(f"{group}: folder {relative!r} does not exist", *where))
                continue
            depth = int(entry.get("maxDepth", 1))
            for path in directory.rglob("*"):
                rel_depth = len(path.relative_to(directory).parts)
                if path.suffix in (".yaml", ".yml") and path.is_file() and rel_depth <= depth:
                    found[path.relative_to(root).as_posix()] = path
        for raw in sources.get("fromFiles") or []:
            path = _inside(root, str(raw))
            if path is None:
                problems.append(
                    doc.problem(f"{group}: fromFiles entry {raw!r} must stay inside", *where)
                )
            elif not path.is_file():
                problems.append(doc.problem(f"{group}: file {raw!r} does not exist", *where))
            else:
                found[path.relative_to(root).as_posix()] = path
    return [found[key] for key in sorted(found)]


def _check_execution(
    doc: YamlDocument, component: ComponentManifest, problems: list[Problem]
) -> None:
    try:
        execution = component.execution
    except ValidationError as exc:
        error = exc.errors()[0]
        reason = error["msg"].removeprefix("Value error, ")
        field_name = ".".join(str(part) for part in error["loc"])
        problems.append(
            doc.problem(f"invalid execution.{field_name}: {reason}", "execution", "python")
        )
        return
    if execution is None and component.kind != "Page":
        problems.append(doc.problem("execution.python.path and attr are required"))


def _unknown_kind(doc: YamlDocument, kind: object, known: tuple[str, ...]) -> Problem:
    guess = difflib.get_close_matches(str(kind), known, n=1)
    hint = f"did you mean {guess[0]!r}?" if guess else f"known kinds: {', '.join(known)}"
    return doc.problem(f"unknown kind {kind!r} ({hint})", "kind")


def _check_plugin_manifest(doc: YamlDocument, problems: list[Problem]) -> None:
    data = doc.data
    if data.get("kind") != PLUGIN_KIND:
        problems.append(
            doc.problem(f"kind must be {PLUGIN_KIND}, not {data.get('kind')!r}", "kind")
        )
    metadata: Any = data.get("metadata")
    if not isinstance(metadata, dict):
        problems.append(doc.problem("metadata must be a mapping", "metadata"))
        return
    for key in ("author", "name"):
        value = metadata.get(key)
        if value is None or not str(value).strip():
            problems.append(doc.problem(f"metadata.{key} is required", "metadata"))
        elif reason := identity_problem(str(value)):
            problems.append(doc.problem(f"metadata.{key} {str(value)!r} {reason}", "metadata", key))
    version = metadata.get("version")
    if version is not None and not isinstance(version, str):
        # As the reference (its manifest model wants a string): YAML reads 0.1 as a number.
        problems.append(
            doc.problem(
                f'metadata.version {version!r} is a number to YAML; quote it: version: "{version}"',
                "metadata",
                "version",
            )
        )
    elif version is not None and version.strip() and not VERSION_RULE.match(version):
        problems.append(
            doc.problem(
                f"metadata.version {version!r} is not a version number (e.g. 0.1.0)",
                "metadata",
                "version",
            )
        )
    spec = data.get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("components") or {}, dict):
        problems.append(doc.problem("spec.components must be a mapping", "spec"))
        if not isinstance(spec, dict):
            data["spec"] = {}
        else:
            spec["components"] = {}
    _check_execution(doc, ComponentManifest(manifest=data, rel_path=MANIFEST_FILE), problems)


def _read_component(
    doc: YamlDocument, problems: list[Problem], warnings: list[Problem]
) -> ComponentManifest | None:
    """The component in ``doc``, or ``None`` for a YAML file that is not a manifest."""
    data = doc.data
    if not isinstance(data, dict):
        return None
    if not is_manifest(data):
        missing = ", ".join(key for key in REQUIRED_KEYS if key not in data)
        if data.get("kind") == "Runner" and "spec" not in data:
            problems.append(doc.problem("a Runner manifest needs spec.usages", "kind"))
        elif "kind" in data:  # looks like a manifest, but the reference does not load it
            message = f"not a component manifest (it has no {missing}); skipped"
            warnings.append(doc.problem(message, "kind"))
        return None
    if data["kind"] not in COMPONENT_KINDS:
        problems.append(_unknown_kind(doc, data["kind"], COMPONENT_KINDS))
        return None
    component = ComponentManifest(owner="builtin", manifest=data, rel_path=doc.rel_path)
    if not component.name:
        problems.append(doc.problem("metadata.name is required", "metadata"))
        return None
    before = len(problems)
    _check_execution(doc, component, problems)
    return component if len(problems) == before else None


def read_plugin(root: Path) -> tuple[PluginPackage | None, list[Problem]]:
    """Read ``root/manifest.yaml`` and every component manifest; return every problem found.

    The package is ``None`` only when the plugin manifest itself cannot be read.
    """
    root = root.resolve()
    manifest_path = root / MANIFEST_FILE
    if not manifest_path.is_file():
        return None, [Problem("", None, not_a_plugin_folder(root))]
    doc = read_yaml_document(manifest_path, MANIFEST_FILE)
    if isinstance(doc, Problem):
        return None, [doc]
    if not is_manifest(doc.data):
        keys = ", ".join(REQUIRED_KEYS)
        return None, [Problem(MANIFEST_FILE, None, f"a plugin manifest needs {keys}")]
    problems: list[Problem] = []
    _check_plugin_manifest(doc, problems)
    plugin = ComponentManifest(owner="builtin", manifest=doc.data, rel_path=MANIFEST_FILE)
    plugin.bind_plugin_root(root)
    components: list[ComponentManifest] = []
    warnings: list[Problem] = []
    seen: dict[tuple[str, str], str] = {}
    documents = {MANIFEST_FILE: doc}
    for path in _candidates(root, doc, problems):
        rel = path.relative_to(root).as_posix()
        component_doc = read_yaml_document(path, rel)
        if isinstance(component_doc, Problem):
            problems.append(component_doc)
            continue
        component = _read_component(component_doc, problems, warnings)
        if component is None:
            continue
        kind = "AgentRunner" if component.kind == "Runner" else component.kind
        key = (kind, component.name)
        if key in seen:
            problems.append(
                component_doc.problem(
                    f"a second {key[0]} named {component.name!r} (the first is in {seen[key]})",
                    "metadata",
                    "name",
                )
            )
            continue
        seen[key] = rel
        documents[rel] = component_doc
        components.append(component.bind_plugin_root(root))
    package = PluginPackage(root, plugin, components, warnings, documents)
    return package, problems


def load_plugin(root: Path) -> PluginPackage:
    """Read the plugin in ``root``; raises :class:`ManifestError` listing every problem."""
    package, problems = read_plugin(root)
    if problems or package is None:
        raise ManifestError(problems=problems)
    return package
