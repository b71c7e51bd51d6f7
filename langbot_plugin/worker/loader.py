"""Importing and instantiating a plugin and its components.

The plugin folder goes first on ``sys.path`` so a plugin's own packages import the
way they do in its tests; each component module is imported by its dotted path
relative to the folder. In a shared worker a plugin is loaded with a
:class:`~langbot_plugin.worker.namespaces.SlotNamespace` instead: its modules get a
private prefix and the folder stays off ``sys.path``. :meth:`LoadedPlugin.reload`
forgets every module loaded from the folder, so edited and newly added files are
picked up.
"""

from __future__ import annotations

import inspect
import logging
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from langbot_plugin.api.definition.components import AgentRunner, BaseComponent, KnowledgeEngine
from langbot_plugin.api.definition.components.kinds import KINDS
from langbot_plugin.api.definition.components.manifest import ComponentManifest
from langbot_plugin.api.definition.discovery import ManifestError, PluginPackage, load_plugin
from langbot_plugin.api.definition.importing import forget_modules, import_module_at
from langbot_plugin.api.definition.pages import populate_pages
from langbot_plugin.api.definition.plugin import BasePlugin
from langbot_plugin.api.definition.validation import abstract_message
from langbot_plugin.api.definition.yaml_document import Problem
from langbot_plugin.protocol.containers import PluginContainer, PluginSettings
from langbot_plugin.protocol.runners import secret_config_values
from langbot_plugin.rpc.redaction import mark_secret
from langbot_plugin.worker.namespaces import SlotNamespace

__all__ = ["KIND_BASES", "LoadedComponent", "LoadedPlugin", "forget_modules"]

logger = logging.getLogger("langbot_plugin.worker")

#: Each manifest kind and the class its component must subclass, in initialization order.
KIND_BASES: dict[str, type[BaseComponent]] = {name: k.base for name, k in KINDS.items()}


def _load(root: Path) -> PluginPackage:
    """Read the folder, with ``spec.pages`` filled from its Page components (as ``lbp build``
    does), so a plugin run with ``lbp run`` reports the same pages as its package. What
    discovery skipped is logged, one warning per file."""
    package = load_plugin(root)
    for warning in package.warnings:
        logger.warning("%s: %s", package.identity, warning)
    populate_pages(package)
    return package


@dataclass
class LoadedComponent:
    manifest: ComponentManifest
    instance: BaseComponent | None = None

    @property
    def kind(self) -> str:
        return self.manifest.kind

    @property
    def name(self) -> str:
        return self.manifest.name


class LoadedPlugin:
    """A plugin folder, and (after :meth:`initialize`) live instances of its code."""

    def __init__(self, root: Path, namespace: SlotNamespace | None = None) -> None:
        self.root = root.resolve()
        self.namespace = namespace
        self.package: PluginPackage = _load(self.root)
        self.components = [LoadedComponent(m) for m in self.package.components]
        self.plugin: BasePlugin | None = None
        self.settings = PluginSettings()
        self.status = "unmounted"
        #: The modules of the version this one replaced (hot reload puts them back
        #: when this one fails to start).
        self.replaced_modules: dict[str, ModuleType] = {}

    @property
    def identity(self) -> str:
        return self.package.identity

    def of_kind(self, *kinds: str) -> list[LoadedComponent]:
        return [c for c in self.components if c.kind in kinds]

    def find(self, kinds: tuple[str, ...], name: str) -> LoadedComponent | None:
        return next((c for c in self.of_kind(*kinds) if c.name == name), None)

    # ----------------------------------------------------------------- importing

    def _import(self, relative_file: str, attr: str, base: type[Any]) -> type[Any]:
        importer = self.namespace.import_module if self.namespace is not None else None
        try:
            module = import_module_at(self.root, relative_file, importer=importer)
        except Exception as exc:
            raise ManifestError(
                f"cannot import {relative_file}: {type(exc).__name__}: {exc}"
            ) from exc
        cls = getattr(module, attr, None)
        if not (isinstance(cls, type) and issubclass(cls, base)):
            raise ManifestError(f"{relative_file}: {attr} must be a subclass of {base.__name__}")
        if inspect.isabstract(cls):  # it could not be created: say so now, in one line
            missing: list[str] = sorted(cls.__abstractmethods__)
            message = abstract_message(attr, missing, base.__name__)
            raise ManifestError(message, [Problem(relative_file, _class_line(cls), message)])
        return cls

    def reload(self) -> None:
        """Re-read the folder and forget its imported modules (for hot reload)."""
        forget_modules(self.root)
        self.package = _load(self.root)
        self.reset()

    def reset(self) -> None:
        """Drop the live instances (keeping the code as imported), ready to initialize again."""
        self.components = [LoadedComponent(m) for m in self.package.components]
        self.plugin = None
        self.status = "mounted"

    def preload(self) -> None:
        """Import the plugin class and every component class; :class:`ManifestError` if any fails.

        Nothing is instantiated; :meth:`initialize` later finds the modules imported.
        The plugin is then ``mounted`` (what it registers with, as the reference's).
        """
        execution = self.package.manifest.execution
        if execution is None:
            raise ManifestError("manifest.yaml needs execution.python.path and attr")
        self._import(execution.python.path, execution.python.attr, BasePlugin)
        for component in self.components:
            base = KIND_BASES.get(component.kind)
            path, entry = component.manifest.module_path, component.manifest.execution
            if base is not None and path is not None and entry is not None:
                self._import(path, entry.python.attr, base)
        if self.status == "unmounted":
            self.status = "mounted"

    # ----------------------------------------------------------------- lifecycle

    async def initialize(self, settings: PluginSettings, channel: Any) -> None:
        """Instantiate the plugin and every component, and run their ``initialize``."""
        self.settings = settings
        execution = self.package.manifest.execution
        if execution is None:
            raise ManifestError("manifest.yaml needs execution.python.path and attr")
        plugin_cls = self._import(execution.python.path, execution.python.attr, BasePlugin)
        plugin = plugin_cls()
        plugin.config = dict(settings.plugin_config)
        spec = self.package.manifest.manifest.get("spec")
        schema = spec.get("config") if isinstance(spec, dict) else None
        mark_secret(*secret_config_values(schema, plugin.config))
        plugin.plugin_runtime_handler = channel
        await plugin.initialize()
        self.plugin = plugin
        ordered = sorted(
            self.components,
            key=lambda c: list(KIND_BASES).index(c.kind) if c.kind in KIND_BASES else 99,
        )
        for component in ordered:
            base = KIND_BASES.get(component.kind)
            if base is None:
                logger.warning(
                    "%s: unknown component kind %s", component.manifest.rel_path, component.kind
                )
                continue
            component.instance = await self._instantiate(component, base, plugin, channel)
        self.status = "initialized"

    async def _instantiate(
        self,
        component: LoadedComponent,
        base: type[BaseComponent],
        plugin: BasePlugin,
        channel: Any,
    ) -> BaseComponent:
        path = component.manifest.module_path
        execution = component.manifest.execution
        cls: type[BaseComponent] = base
        if path is not None and execution is not None:
            cls = self._import(path, execution.python.attr, base)
        instance = cls()
        if isinstance(instance, AgentRunner):
            spec = component.manifest.manifest.get("spec")
            instance.bind_runtime(
                plugin_runtime_handler=channel,
                plugin_config=self.settings.plugin_config,
                plugin_identity=self.identity,
            )
            schema = type(instance).get_config_schema()
            if schema and isinstance(spec, dict) and not spec.get("config"):
                spec["config"] = schema
            if isinstance(spec, dict):
                _declared_in_code(type(instance), spec)
        # runners too (as 0.7.18): inside a run its calls are the run's (``run_scoped``)
        instance.plugin = plugin
        await instance.initialize()
        return instance

    def container(self) -> PluginContainer:
        """How this plugin describes itself to the runtime."""
        return PluginContainer.model_validate(
            {
                "manifest": self.package.manifest.model_dump(),
                "enabled": self.settings.enabled,
                "priority": self.settings.priority,
                "plugin_config": self.settings.plugin_config,
                "status": self.status,
                "components": [
                    {"manifest": c.manifest.model_dump(), "component_config": _config_of(c)}
                    for c in self.components
                ],
            }
        )


def _declared_in_code(cls: type[AgentRunner], spec: dict[str, Any]) -> None:
    """Fill ``spec.capabilities`` / ``spec.permissions`` the manifest leaves out from
    the runner class's ``get_capabilities()`` / ``get_permissions()`` (Protocol v1), when
    the class overrides them: only what differs from the defaults is written."""
    for key, method in (("capabilities", "get_capabilities"), ("permissions", "get_permissions")):
        own = getattr(getattr(cls, method), "__func__", None)
        if spec.get(key) or own is getattr(AgentRunner, method).__func__:
            continue
        declared = getattr(cls, method)().model_dump(mode="json", exclude_defaults=True)
        if declared:
            spec[key] = declared


def _class_line(cls: type[Any]) -> int | None:
    try:
        return inspect.getsourcelines(cls)[1]
    except (OSError, TypeError):
        return None


def _config_of(component: LoadedComponent) -> dict[str, Any]:
    """Facts about a live component the runtime lists without calling it."""
    if isinstance(component.instance, KnowledgeEngine):
        return {"capabilities": type(component.instance).get_capabilities()}
    return {}
