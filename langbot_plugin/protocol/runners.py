"""Wire shapes around agent runners: the listing entry and runtime-made results.

The released host validates a listed runner's ``manifest`` strictly (unknown keys,
capabilities or permission values make it drop the runner), so :func:`runner_entry`
keeps exactly the fields and values it accepts.
"""

from __future__ import annotations

import time
from typing import Any, get_args

from pydantic import Field

from langbot_plugin.api.entities.builtin.agent_runner.operations import (
    KnowledgeBaseOperation,
    ModelOperation,
    ToolOperation,
)
from langbot_plugin.protocol.containers import ManifestDump
from langbot_plugin.protocol.spec import Result

__all__ = [
    "CAPABILITIES",
    "PERMISSIONS",
    "RUNNER_KINDS",
    "RunResultItem",
    "run_failed",
    "runner_entry",
    "runner_id",
]


class RunResultItem(Result):
    """One item of a run as it travels: an ``AgentRunResult`` dump. Only the envelope
    of a result is declared here; ``data`` is the result type's own."""

    run_id: str = ""
    type: str
    data: Any = Field(default_factory=dict[str, Any])
    usage: Any = None
    sequence: int | None = None
    timestamp: int | None = None


#: Manifest kinds that declare an agent runner (0.5 spelling first).
RUNNER_KINDS = ("AgentRunner", "Runner")

CAPABILITIES = (
    "streaming",
    "tool_calling",
    "knowledge_retrieval",
    "multimodal_input",
    "skill_authoring",
    "interrupt",
    "steering",
    "interactions",
)

PERMISSIONS: dict[str, tuple[str, ...]] = {
    "models": get_args(ModelOperation),
    "tools": get_args(ToolOperation),
    "knowledge_bases": get_args(KnowledgeBaseOperation),
    "history": ("page", "search"),
    "events": ("get", "page"),
    "storage": ("plugin", "workspace"),
    "interactions": ("request",),
}

_USAGES = ("agent", "event")


def runner_id(author: str, plugin: str, runner: str) -> str:
    return f"plugin:{author}/{plugin}/{runner}"


def _i18n(value: Any) -> dict[str, str] | None:
    if isinstance(value, str):
        return {"en_US": value}
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items() if v is not None}
    return None


def _capabilities(spec: dict[str, Any]) -> dict[str, bool]:
    declared = spec.get("capabilities")
    declared = declared if isinstance(declared, dict) else {}
    return {name: bool(declared.get(name, False)) for name in CAPABILITIES}


def _permissions(spec: dict[str, Any]) -> dict[str, list[str]]:
    declared = spec.get("permissions")
    declared = declared if isinstance(declared, dict) else {}
    result: dict[str, list[str]] = {}
    for group, allowed in PERMISSIONS.items():
        values = declared.get(group)
        values = values if isinstance(values, list) else []
        result[group] = [v for v in values if v in allowed]
    return result


def _config_schema(spec: dict[str, Any]) -> list[dict[str, Any]]:
    items = spec.get("config")
    if not isinstance(items, list):
        return []
    return [item for item in items if isinstance(item, dict) and "name" in item and "type" in item]


def runner_entry(author: str, plugin: str, version: str, component: ManifestDump) -> dict[str, Any]:
    """The ``list_runners`` item for one runner component."""
    spec = component.spec
    meta = component.metadata
    name = component.name
    label = _i18n(meta.get("label")) or {"en_US": name}
    description = _i18n(meta.get("description"))
    usages = [u for u in spec.get("usages", ["agent"]) if u in _USAGES] or ["agent"]
    patterns = spec.get("events") if "event" in usages else None
    capabilities = _capabilities(spec)
    permissions = _permissions(spec)
    config = _config_schema(spec)
    manifest: dict[str, Any] = {
        "id": runner_id(author, plugin, name),
        "name": name,
        "label": label,
        "component_kind": "Runner",
        "usages": usages,
        "supported_event_patterns": patterns if isinstance(patterns, list) and patterns else ["*"],
        "description": description,
        "capabilities": capabilities,
        "permissions": permissions,
        "config_schema": config,
        "metadata": {"plugin_author": author, "plugin_name": plugin, "runner_name": name},
    }
    return {
        "plugin_author": author,
        "plugin_name": plugin,
        "plugin_version": version,
        "runner_name": name,
        "runner_description": description,
        "manifest": manifest,
        "capabilities": capabilities,
        "permissions": permissions,
        "config": config,
    }


def run_failed(
    run_id: str, code: str, error: str, *, retryable: bool = False, sequence: int | None = None
) -> dict[str, Any]:
    """A ``run.failed`` result made by the runtime itself (the runner never answered)."""
    return {
        "run_id": run_id,
        "type": "run.failed",
        "data": {"error": error, "code": code, "retryable": retryable},
        "usage": None,
        "sequence": sequence,
        "timestamp": int(time.time()),
    }
