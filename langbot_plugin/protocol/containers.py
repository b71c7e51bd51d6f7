"""Wire shapes describing a plugin and its components (as the host displays them)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ComponentEntry",
    "ManifestDump",
    "PluginContainer",
    "PluginSettings",
    "PluginStatus",
]

PluginStatus = Literal["unmounted", "mounted", "initialized"]


class ManifestDump(BaseModel):
    """A manifest as it travels: the raw YAML mapping, its owner and its path."""

    model_config = ConfigDict(extra="allow")

    owner: str = "builtin"
    manifest: dict[str, Any]
    rel_path: str = ""

    @property
    def kind(self) -> str:
        return str(self.manifest.get("kind", ""))

    @property
    def metadata(self) -> dict[str, Any]:
        value = self.manifest.get("metadata")
        return value if isinstance(value, dict) else {}

    @property
    def spec(self) -> dict[str, Any]:
        value = self.manifest.get("spec")
        return value if isinstance(value, dict) else {}

    @property
    def name(self) -> str:
        return str(self.metadata.get("name", ""))


class ComponentEntry(BaseModel):
    model_config = ConfigDict(extra="allow")

    manifest: ManifestDump
    component_instance: None = None
    component_config: dict[str, Any] = Field(default_factory=dict[str, Any])


class PluginContainer(BaseModel):
    """A plugin as reported to the host by ``list_plugins`` / ``get_plugin_info``."""

    model_config = ConfigDict(extra="allow")

    debug: bool = False
    install_source: str = ""
    install_info: dict[str, Any] = Field(default_factory=dict[str, Any])
    manifest: ManifestDump
    plugin_instance: None = None
    enabled: bool = True
    priority: int = 0
    plugin_config: dict[str, Any] = Field(default_factory=dict[str, Any])
    status: PluginStatus = "unmounted"
    components: list[ComponentEntry] = Field(default_factory=list[ComponentEntry])

    @property
    def author(self) -> str:
        return str(self.manifest.metadata.get("author", ""))

    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def identity(self) -> str:
        return f"{self.author}/{self.name}"

    def components_of(self, *kinds: str) -> list[ManifestDump]:
        return [c.manifest for c in self.components if c.manifest.kind in kinds]


class PluginSettings(BaseModel):
    """What the host stores about an installed plugin (``get_plugin_settings``)."""

    model_config = ConfigDict(extra="allow")

    enabled: bool = True
    priority: int = 0
    plugin_config: dict[str, Any] = Field(default_factory=dict[str, Any])
    install_source: str = "local"
    install_info: dict[str, Any] = Field(default_factory=dict[str, Any])
    installation_uuid: str | None = None
    runtime_revision: int | None = None
    artifact_digest: str | None = None
