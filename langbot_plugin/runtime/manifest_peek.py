"""Reading a package's identity without importing the plugin API."""

from __future__ import annotations

from pathlib import Path

import yaml

from langbot_plugin.protocol.identities import identity_problem
from langbot_plugin.runtime.artifacts import ArtifactError

__all__ = ["read_identity", "read_version"]


def _metadata(folder: Path) -> dict[str, object]:
    try:
        data = yaml.safe_load((folder / "manifest.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ArtifactError(f"manifest.yaml cannot be read: {exc}") from None
    metadata = data.get("metadata") if isinstance(data, dict) else None
    if not isinstance(metadata, dict):
        raise ArtifactError("manifest.yaml has no metadata")
    return {str(k): v for k, v in metadata.items()}  # pyright: ignore[reportUnknownVariableType]


def read_version(folder: Path) -> str:
    """``metadata.version`` from ``folder/manifest.yaml`` ("" when absent)."""
    return str(_metadata(folder).get("version") or "")


def read_identity(folder: Path) -> str:
    """``author/name`` from ``folder/manifest.yaml``; refuses missing or unsafe names."""
    metadata = _metadata(folder)
    author, name = str(metadata.get("author", "")), str(metadata.get("name", ""))
    for label, value in (("author", author), ("name", name)):
        if reason := identity_problem(value):
            raise ArtifactError(f"manifest metadata.{label} {value!r} {reason}")
    return f"{author}/{name}"
