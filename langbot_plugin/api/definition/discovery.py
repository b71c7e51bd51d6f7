"""Reading a plugin folder: its ``manifest.yaml`` and the components it declares.

``spec.components`` maps a group name to ``{fromDirs: [{path, maxDepth}], fromFiles:
[path]}``; every YAML found there that is a manifest becomes a component, whatever
the group is called (its own ``kind`` decides what it is). Files are read in path
order, each once; a path leaving the plugin folder, unreadable YAML or a component
without a name is an error with the file named, never a silent skip.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import yaml
from pydantic import ValidationError

from langbot_plugin.api.definition.components.manifest import ComponentManifest, is_manifest
from langbot_plugin.rpc.errors import RPCError

__all__ = ["ManifestError", "PluginPackage", "load_plugin", "load_yaml"]

MANIFEST_FILE = "manifest.yaml"


class ManifestError(RPCError, ValueError):
    """A plugin folder or one of its manifests is not usable; the message says why."""

    code = "manifest_invalid"


@dataclass
class PluginPackage:
    root: Path
    manifest: ComponentManifest
    components: list[ComponentManifest] = field(default_factory=list[ComponentManifest])

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


def load_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ManifestError(f"{path}: cannot read YAML: {exc}") from None


def _inside(root: Path, relative: str, what: str) -> Path:
    pure = PurePosixPath(relative.replace("\\", "/"))
    if pure.is_absolute() or ".." in pure.parts:
        raise ManifestError(f"{what} {relative!r} must be a relative path inside the plugin")
    return root / pure


def _candidates(root: Path, components: dict[str, Any]) -> list[Path]:
    found: dict[str, Path] = {}
    for group, sources in components.items():
        if not isinstance(sources, dict):
            raise ManifestError(f"spec.components.{group} must be a mapping")
        for raw_entry in sources.get("fromDirs") or []:
            entry = {"path": raw_entry} if isinstance(raw_entry, str) else raw_entry
            directory = _inside(root, str(entry.get("path", "")), f"{group} fromDirs path")
            depth = int(entry.get("maxDepth", 1))
            if not directory.is_dir():
                raise ManifestError(f"{group}: folder {entry.get('path')!r} does not exist")
            for path in directory.rglob("*"):
                rel_depth = len(path.relative_to(directory).parts)
                if path.suffix in (".yaml", ".yml") and path.is_file() and rel_depth <= depth:
                    found[path.relative_to(root).as_posix()] = path
        for relative in sources.get("fromFiles") or []:
            path = _inside(root, str(relative), f"{group} fromFiles entry")
            if not path.is_file():
                raise ManifestError(f"{group}: file {relative!r} does not exist")
            found[path.relative_to(root).as_posix()] = path
    return [found[key] for key in sorted(found)]


def load_plugin(root: Path) -> PluginPackage:
    """Read ``root/manifest.yaml`` and every component manifest it points to."""
    root = root.resolve()
    manifest_path = root / MANIFEST_FILE
    if not manifest_path.is_file():
        raise ManifestError(f"no {MANIFEST_FILE} in {root} (run this in a plugin folder)")
    raw = load_yaml(manifest_path)
    if not is_manifest(raw):
        raise ManifestError(f"{manifest_path} needs apiVersion, kind, metadata and spec")
    plugin = ComponentManifest(owner="builtin", manifest=raw, rel_path=MANIFEST_FILE)
    meta = plugin.metadata
    for key in ("author", "name"):
        if not str(meta.get(key) or "").strip():
            raise ManifestError(f"{manifest_path}: metadata.{key} is required")
    spec = plugin.spec
    components_spec = spec.get("components") or {}
    if not isinstance(components_spec, dict):
        raise ManifestError(f"{manifest_path}: spec.components must be a mapping")
    components: list[ComponentManifest] = []
    for path in _candidates(root, components_spec):
        data = load_yaml(path)
        if not is_manifest(data):
            continue
        rel = path.relative_to(root).as_posix()
        component = ComponentManifest(owner="builtin", manifest=data, rel_path=rel)
        if not component.name:
            raise ManifestError(f"{rel}: metadata.name is required")
        try:
            execution = component.execution
        except ValidationError as exc:
            raise ManifestError(f"{rel}: invalid execution: {exc.errors()[0]['msg']}") from None
        if execution is None and component.kind != "Page":
            raise ManifestError(f"{rel}: execution.python.path and attr are required")
        components.append(component)
    return PluginPackage(root=root, manifest=plugin, components=components)
