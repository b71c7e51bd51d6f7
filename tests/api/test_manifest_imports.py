"""A manifest read from a plugin folder imports its component's class from there
(``ComponentManifest.get_python_component_class``), through the worker's importer;
forgetting a folder's modules drops its namespace packages too."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from langbot_plugin.api.definition.components.manifest import ComponentManifest
from langbot_plugin.api.definition.discovery import load_plugin
from langbot_plugin.api.definition.importing import forget_modules, modules_of
from langbot_plugin.worker.loader import LoadedPlugin

_serial = itertools.count(1)

MANIFEST = """\
apiVersion: v1
kind: Plugin
metadata:
  author: tester
  name: importing
  version: 1.0.0
  label:
    en_US: importing
spec:
  components:
    Tools:
      fromDirs:
        - path: {package}/
          maxDepth: 3
execution:
  python:
    path: main.py
    attr: Importing
"""

MAIN = """\
from langbot_plugin.api.definition.plugin import BasePlugin


class Importing(BasePlugin):
    pass
"""

TOOL_YAML = """\
apiVersion: v1
kind: Tool
metadata:
  name: echo
  label:
    en_US: echo
spec:
  llm_prompt: says it back
  parameters:
    type: object
    properties: {{}}
execution:
  python:
    path: {file}
    attr: {attr}
"""

TOOL = """\
from langbot_plugin.api.definition.components.tool.tool import Tool

from .helper import WORD


class Echo(Tool):
    word = WORD

    async def call(self, params):
        return params
"""


def plugin_folder(tmp_path: Path, *, attr: str = "Echo") -> tuple[Path, str]:
    """A plugin whose tool lives in a namespace package (no ``__init__.py``) of a name
    no other test uses; returns the folder and that package's name."""
    package = f"g9parts{next(_serial)}"
    root = tmp_path / "plugin"
    tools = root / package / "tools"
    tools.mkdir(parents=True)
    (root / "manifest.yaml").write_text(MANIFEST.format(package=package))
    (root / "main.py").write_text(MAIN)
    (tools / "echo.yaml").write_text(TOOL_YAML.format(file="echo.py", attr=attr))
    (tools / "echo.py").write_text(TOOL)
    (tools / "helper.py").write_text("WORD = 'from the plugin folder'\n")
    return root, package


@pytest.fixture
def clean_modules() -> Iterator[list[Path]]:
    roots: list[Path] = []
    yield roots
    for root in roots:
        forget_modules(root)


def test_a_component_class_is_imported_from_its_plugin_folder(
    tmp_path: Path, clean_modules: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, package = plugin_folder(tmp_path)
    clean_modules.append(root)
    monkeypatch.chdir(tmp_path)  # not the plugin folder: the manifest knows its own
    before = list(sys.path)
    plugin = load_plugin(root)
    (tool,) = plugin.components
    assert tool.plugin_root == root.resolve()
    echo = tool.get_python_component_class()
    assert echo.__name__ == "Echo"
    assert echo.__module__ == f"{package}.tools.echo"
    assert echo.word == "from the plugin folder"
    assert plugin.manifest.get_python_component_class().__name__ == "Importing"
    assert sys.path == before


def test_the_worker_and_the_manifest_import_the_same_class(
    tmp_path: Path, clean_modules: list[Path]
) -> None:
    root, _ = plugin_folder(tmp_path)
    clean_modules.append(root)
    loaded = LoadedPlugin(root)
    loaded.preload()
    (component,) = loaded.components
    assert (
        component.manifest.get_python_component_class()
        is sys.modules[component.manifest.get_python_component_class().__module__].Echo
    )


def test_a_manifest_without_a_folder_imports_from_the_working_directory(
    tmp_path: Path, clean_modules: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, package = plugin_folder(tmp_path)
    clean_modules.append(root)
    data = load_plugin(root).components[0].model_dump()
    received = ComponentManifest.model_validate(data)  # as over the wire: no folder
    assert received.plugin_root is None
    monkeypatch.chdir(root)
    assert received.get_python_component_class().__module__ == f"{package}.tools.echo"


def test_missing_code_is_a_clear_error(tmp_path: Path, clean_modules: list[Path]) -> None:
    root, _ = plugin_folder(tmp_path, attr="Nobody")
    clean_modules.append(root)
    (tool,) = load_plugin(root).components
    with pytest.raises(AttributeError, match="'Nobody'"):
        tool.get_python_component_class()
    page = ComponentManifest(manifest={"kind": "Page", "metadata": {"name": "p"}, "spec": {}})
    with pytest.raises(ValueError, match=r"no execution\.python"):
        page.get_python_component_class()


def test_forgetting_a_folder_drops_its_namespace_packages(tmp_path: Path) -> None:
    root, package = plugin_folder(tmp_path)
    (tool,) = load_plugin(root).components
    tool.get_python_component_class()
    names = {package, f"{package}.tools", f"{package}.tools.echo", f"{package}.tools.helper"}
    assert names <= set(sys.modules)
    assert getattr(sys.modules[package], "__file__", None) is None  # a namespace package
    assert names <= set(modules_of(root))
    forget_modules(root)
    assert not names & set(sys.modules)
