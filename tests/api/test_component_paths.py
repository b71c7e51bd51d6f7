"""``execution.python.path`` is the plugin's own data: only a module inside the plugin
folder is imported (issue 17, item 6; the reference 0.7.18 pins the same cases)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from langbot_plugin.api.definition.components.manifest import ComponentManifest
from langbot_plugin.api.definition.discovery import ManifestError


def _manifest(rel_path: str, python_path: str) -> ComponentManifest:
    return ComponentManifest(
        manifest={
            "apiVersion": "v1",
            "kind": "Command",
            "metadata": {"name": "probe", "label": {"en_US": "probe"}},
            "spec": {},
            "execution": {"python": {"path": python_path, "attr": "Component"}},
        },
        rel_path=rel_path,
    )


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A plugin folder as the working directory (where workers run), its ``components``
    package forgotten afterwards."""
    root = tmp_path / "plugin"
    (root / "components").mkdir(parents=True)
    (root / "components" / "__init__.py").write_text("")
    (root / "components" / "probe.py").write_text("class Component:\n    marker = 'INSIDE'\n")
    monkeypatch.chdir(root)
    yield root
    for name in [n for n in sys.modules if n == "components" or n.startswith("components.")]:
        del sys.modules[name]


@pytest.mark.parametrize(
    "declared", ["C:/windows/evil.py", "c:evil.py", "", "  ", "a\x00.py", "/etc/x.py", "../x.py"]
)
def test_paths_that_are_not_inside_the_plugin_are_refused(plugin: Path, declared: str) -> None:
    with pytest.raises(ValueError, match="execution path"):
        _manifest("components/probe.yaml", declared).get_python_component_class()


def test_a_manifest_named_by_its_absolute_path_imports_the_plugins_module(plugin: Path) -> None:
    manifest = _manifest(str(plugin / "components" / "probe.yaml"), "probe.py")
    found = manifest.get_python_component_class()
    assert found.__module__ == "components.probe"  # not a module named after the temp folder
    assert found.marker == "INSIDE"


def test_a_component_outside_the_plugin_is_refused_with_a_code(plugin: Path) -> None:
    outside = plugin.parent / "outside.py"
    outside.write_text("class Component:\n    pass\n")
    manifest = _manifest(str(plugin.parent / "outside.yaml"), "outside.py")
    with pytest.raises(ManifestError, match="escapes the plugin directory") as caught:
        manifest.get_python_component_class()
    assert caught.value.code == "manifest_invalid"
    assert "outside" not in sys.modules
