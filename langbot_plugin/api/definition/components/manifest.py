"""Manifest models: ``manifest.yaml`` of a plugin and the YAML of each component.

Every manifest has ``apiVersion``, ``kind``, ``metadata`` and ``spec``; a component
with code adds ``execution.python.{path, attr}`` (``path`` relative to the YAML's
folder). The raw mapping is kept as written (unknown keys included) and travels to
the host as is; the typed views below are for plugin code and tools. A manifest read
from a plugin folder (:mod:`langbot_plugin.api.definition.discovery`) knows that
folder (:attr:`ComponentManifest.plugin_root`), so
:meth:`ComponentManifest.get_python_component_class` imports its code from there.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from langbot_plugin.protocol.containers import ManifestDump
from langbot_plugin.rpc.errors import InvalidParamsError

__all__ = [
    "ComponentManifest",
    "Execution",
    "I18nString",
    "InvalidRunnerManifest",
    "Metadata",
    "MetadataView",
    "PythonExecution",
    "RunnerUsageSpec",
    "is_manifest",
]

REQUIRED_KEYS = ("apiVersion", "kind", "metadata", "spec")
_DRIVE = re.compile(r"^[A-Za-z]:")


def is_manifest(data: object) -> bool:
    """Whether a parsed YAML document is a manifest (has the four top-level keys)."""
    return isinstance(data, dict) and all(key in data for key in REQUIRED_KEYS)


class I18nString(BaseModel):
    """A text in several languages; ``en_US`` is required, other locales are kept."""

    model_config = ConfigDict(extra="allow")

    en_US: str
    zh_Hans: str | None = None
    zh_Hant: str | None = None
    ja_JP: str | None = None
    th_TH: str | None = None
    vi_VN: str | None = None
    es_ES: str | None = None

    def to_dict(self) -> dict[str, str]:
        return {k: v for k, v in self.model_dump().items() if isinstance(v, str)}


class Metadata(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str
    label: I18nString
    description: I18nString = I18nString(en_US="")
    version: str | None = None
    icon: str = ""
    author: str | None = None
    repository: str | None = None

    @field_validator("description", mode="before")
    @classmethod
    def _missing_description(cls, value: Any) -> Any:
        return {"en_US": ""} if value is None else value

    @field_validator("icon", mode="before")
    @classmethod
    def _missing_icon(cls, value: Any) -> Any:
        return "" if value is None else value


class PythonExecution(BaseModel):
    model_config = ConfigDict(extra="allow")

    path: str
    attr: str

    @field_validator("path")
    @classmethod
    def _relative(cls, value: str) -> str:
        """A path relative to the manifest's folder, ``/``-separated: refuses the empty
        path, NUL, absolute paths, drive letters (``C:/x.py``, ``c:x.py``) and ``..``
        leaving the plugin."""
        portable = value.replace("\\", "/")
        if not portable.strip():
            raise ValueError("execution path is empty")
        if "\x00" in portable:
            raise ValueError(f"execution path {value!r} contains NUL")
        if _DRIVE.match(portable):
            raise ValueError(f"execution path {value!r} names a drive; it must be relative")
        normalized = posixpath.normpath(portable.removeprefix("./"))
        if posixpath.isabs(normalized) or normalized.split("/")[0] == "..":
            raise ValueError(f"execution path {value!r} must stay inside the plugin")
        return normalized


class Execution(BaseModel):
    """How the component's code runs. ``sharedRuntime: shared-runtime-v1`` asks for a
    worker process shared with other certified plugins (absent: a dedicated worker);
    ``componentModel: stateless-v1`` promises the singleton, task-local component
    contract that certification requires."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    python: PythonExecution
    shared_runtime: Literal["shared-runtime-v1"] | None = Field(default=None, alias="sharedRuntime")
    component_model: Literal["stateless-v1"] | None = Field(default=None, alias="componentModel")

    @model_validator(mode="before")
    @classmethod
    def _shared_runtime_given_means_v1(cls, data: Any) -> Any:
        given = isinstance(data, dict) and "sharedRuntime" in data
        if given and data["sharedRuntime"] != "shared-runtime-v1":
            raise ValueError("sharedRuntime must be shared-runtime-v1 when present")
        return data


class InvalidRunnerManifest(InvalidParamsError, ValueError):
    """A ``kind: Runner`` component whose ``spec`` does not say what it is used for."""

    code = "runner_manifest_invalid"


class RunnerUsageSpec(BaseModel):
    """What a ``kind: Runner`` spec must declare: its ``usages`` (``agent``, ``event``
    or both) and, for event use, the ``events`` it handles."""

    usages: list[Literal["agent", "event"]] = Field(min_length=1)
    events: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def validate_events(self) -> RunnerUsageSpec:
        if "event" in self.usages and not self.events:
            raise ValueError("a Runner used for events must list them in spec.events")
        return self

    @classmethod
    def of_spec(cls, spec: object, where: str = "Runner manifest") -> RunnerUsageSpec:
        """Validate a component's ``spec``; :class:`InvalidRunnerManifest` naming
        ``where`` and the first problem when it does not declare its usage."""
        try:
            return cls.model_validate(spec)
        except ValueError as exc:
            raise InvalidRunnerManifest(f"invalid {where}: {exc}") from exc


_I18N_FIELDS = frozenset({"label", "description"})


class MetadataView(dict[str, Any]):
    """A manifest's ``metadata`` mapping, also readable the way the typed
    :class:`Metadata` is: ``view.name``, ``view.description.en_US`` (a missing text is
    empty, a missing optional field ``None``). The released host reads component
    manifests this way; our code reads the mapping."""

    def __getattr__(self, key: str) -> Any:
        if key.startswith("_") or key not in Metadata.model_fields:
            raise AttributeError(key)
        value = self.get(key)
        if key in _I18N_FIELDS:
            texts = value if isinstance(value, dict) else {"en_US": str(value or "")}
            return I18nString.model_validate({"en_US": "", **texts})
        if key == "icon":
            return value or ""
        if key == "name":
            return str(value or "")
        return value


def _inside_plugin(root: Path, module_path: str) -> str:
    """``module_path`` relative to ``root`` (a manifest named by an absolute path gives
    an absolute one); ``ManifestError`` when it is outside the plugin folder."""
    target = (root / module_path).resolve()
    if not target.is_relative_to(root):
        from langbot_plugin.api.definition.discovery import ManifestError

        raise ManifestError(f"{module_path} escapes the plugin directory {root}")
    return target.relative_to(root).as_posix()


class ComponentManifest(ManifestDump):
    """A manifest with typed views of its parts (and, when read from a plugin folder,
    that folder)."""

    _plugin_root: Path | None = PrivateAttr(default=None)

    def __init__(
        self,
        owner: str = "builtin",
        manifest: dict[str, Any] | None = None,
        rel_path: str = "",
        **data: Any,
    ) -> None:
        """``ComponentManifest(owner, manifest, rel_path)``, positionally as the
        reference takes them, or by keyword."""
        if manifest is not None:
            data["manifest"] = manifest
        super().__init__(owner=owner, rel_path=rel_path, **data)

    @property
    def plugin_root(self) -> Path | None:
        """The plugin folder this manifest was read from (``None`` when it was built
        from data, e.g. received over the wire)."""
        return self._plugin_root

    def bind_plugin_root(self, root: Path) -> ComponentManifest:
        """Record the plugin folder the manifest belongs to; returns the manifest."""
        self._plugin_root = Path(root).resolve()
        return self

    def get_python_component_class(self) -> type[Any]:
        """The class ``execution.python.attr`` of the component's module, imported from
        :attr:`plugin_root` (the current directory, where workers run, when the manifest
        knows no folder). ``sys.path`` is as it was afterwards. Raises ``ValueError``
        without ``execution``, and what the import raises (``AttributeError`` for a
        missing ``attr``)."""
        from langbot_plugin.api.definition.importing import import_attribute

        execution, relative = self.execution, self.module_path
        if execution is None or relative is None:
            raise ValueError(
                f"Execution is not set: {self.rel_path or 'the manifest'} has no execution.python"
            )
        root = (self._plugin_root or Path.cwd()).resolve()
        relative = _inside_plugin(root, relative)
        found = import_attribute(root, relative, execution.python.attr, keep_on_path=False)
        if not isinstance(found, type):
            raise TypeError(f"{relative}: {execution.python.attr} is not a class")
        return found

    @property
    def metadata(self) -> MetadataView:  # pyright: ignore[reportIncompatibleVariableOverride]
        """The ``metadata`` mapping, readable as attributes too (:class:`MetadataView`)."""
        return MetadataView(super().metadata)

    @classmethod
    def is_component_manifest(cls, manifest: object) -> bool:
        """Whether ``manifest`` (a mapping) has the shape of a component manifest."""
        return is_manifest(manifest)

    @property
    def typed_metadata(self) -> Metadata:
        return Metadata.model_validate(self.manifest.get("metadata") or {})

    @property
    def execution(self) -> Execution | None:
        raw = self.manifest.get("execution")
        return Execution.model_validate(raw) if raw else None

    @property
    def rel_dir(self) -> str:
        return posixpath.dirname(self.rel_path)

    @property
    def module_path(self) -> str | None:
        """The Python file of the component, relative to the plugin root."""
        execution = self.execution
        if execution is None:
            return None
        return posixpath.normpath(posixpath.join(self.rel_dir, execution.python.path))

    @property
    def icon_rel_path(self) -> str | None:
        icon = self.typed_metadata.icon
        return posixpath.join(self.rel_dir, icon) if icon else None

    def to_plain_dict(self) -> dict[str, Any]:
        meta = self.typed_metadata
        return {
            "name": meta.name,
            "label": meta.label.to_dict(),
            "description": meta.description.to_dict(),
            "icon": meta.icon,
            "spec": self.manifest.get("spec"),
        }
