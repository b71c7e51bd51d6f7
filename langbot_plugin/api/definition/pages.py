"""The plugin's page list (``spec.pages``), derived from its ``Page`` components.

LangBot learns which pages a plugin has from ``spec.pages`` of its manifest: one
``{id, label, path}`` entry per page, ``path`` relative to the plugin root. Authors
declare pages as ``kind: Page`` components; :func:`populate_pages` writes the list
into the manifest (``lbp build`` does it for the package, the worker for
registration). Entries written by hand are kept unless a component has the same id.
"""

from __future__ import annotations

import posixpath
from typing import Any

from langbot_plugin.api.definition.discovery import PluginPackage

__all__ = ["page_entries", "populate_pages"]

DEFAULT_PAGE_FILE = "index.html"


def page_entries(package: PluginPackage) -> list[dict[str, Any]]:
    """``spec.pages`` as it should be: hand-written entries, then one per Page component."""
    spec = package.manifest.spec
    entries: dict[str, dict[str, Any]] = {}
    for raw in spec.get("pages") or []:
        if isinstance(raw, dict) and raw.get("id"):
            entries[str(raw["id"])] = dict(raw)
    for component in package.of_kind("Page"):
        component_spec = component.spec
        relative = str(component_spec.get("path") or DEFAULT_PAGE_FILE)
        metadata = component.metadata
        entries[component.name] = {
            "id": component.name,
            "label": metadata.get("label") or {"en_US": component.name},
            "path": posixpath.normpath(posixpath.join(component.rel_dir, relative)),
        }
    return list(entries.values())


def populate_pages(package: PluginPackage) -> list[dict[str, Any]]:
    """Write :func:`page_entries` into the plugin manifest's ``spec.pages``; return them."""
    entries = page_entries(package)
    raw = package.manifest.manifest
    spec = raw.get("spec")
    if not isinstance(spec, dict):
        spec = {}
        raw["spec"] = spec
    spec["pages"] = entries
    return entries
