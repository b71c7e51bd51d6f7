"""A runner's declaration (``spec.capabilities``, ``spec.permissions``, ``spec.context``)
checked against what the released SDKs and seed 003's Protocol v1 know.

The released host refuses a manifest with keys it does not know, so
:func:`~langbot_plugin.protocol.runners.runner_entry` sends it only the old fields; a
Protocol v1 host finds the whole declaration under :data:`DECLARATION_KEY` beside it,
present only when the runner declares something of Protocol v1 (:func:`protocol_v1`);
``lbp build --check`` refuses what neither knows (:func:`problems`) and warns about
what only Protocol v1 knows (:func:`protocol_v1_only`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from langbot_plugin.api.entities.builtin.agent_runner.manifest_v1 import (
    AgentRunnerContextPolicy,
    ProtocolV1Capabilities,
    ProtocolV1Permissions,
)
from langbot_plugin.protocol.runners import CAPABILITIES, PERMISSIONS

__all__ = ["DECLARATION_KEY", "KeyPath", "problems", "protocol_v1", "protocol_v1_only"]

#: The listing entry's key for the Protocol v1 declaration.
DECLARATION_KEY = "protocol_v1"

#: Where a key sits in the component manifest (``("spec", "capabilities", "x")``).
KeyPath = tuple[str, ...]

_SECTIONS: dict[str, type[BaseModel]] = {
    "capabilities": ProtocolV1Capabilities,
    "permissions": ProtocolV1Permissions,
    "context": AgentRunnerContextPolicy,
}


def _section(spec: dict[str, Any], name: str) -> dict[str, Any] | None:
    value = spec.get(name)
    return value if isinstance(value, dict) else None  # pyright: ignore[reportUnknownVariableType]


def problems(spec: dict[str, Any]) -> list[tuple[KeyPath, str]]:
    """What neither a released SDK nor Protocol v1 accepts in ``spec``, each with the
    path of its key (a typo'd capability, an unknown permission value, a context
    policy value out of its set)."""
    found: list[tuple[KeyPath, str]] = []
    for name, model in _SECTIONS.items():
        if name not in spec or spec[name] is None:
            continue
        try:
            model.model_validate(spec[name])
        except ValidationError as exc:
            for error in exc.errors():
                loc = tuple(str(part) for part in error["loc"])
                key = loc[:1]
                path = ("spec", name, *key)
                if error["type"] == "extra_forbidden":
                    known = ", ".join(sorted(model.model_fields))
                    message = f"spec.{name}.{key[0]} is not a known key (known: {known})"
                elif error["type"] == "model_type":
                    message = f"spec.{name} must be a mapping"
                    path = ("spec", name)
                else:
                    where = ".".join(loc)
                    message = f"spec.{name}.{where}: {error['msg']} (got {error['input']!r})"
                found.append((path, message))
    return found


def protocol_v1_only(spec: dict[str, Any]) -> list[tuple[KeyPath, str]]:
    """The keys and values of ``spec`` only Protocol v1 knows (the released host drops
    them), each with its path and the name of what it needs."""
    found: list[tuple[KeyPath, str]] = []
    capabilities = _section(spec, "capabilities") or {}
    for name in capabilities:
        if name in ProtocolV1Capabilities.model_fields and name not in CAPABILITIES:
            found.append((("spec", "capabilities", name), f"spec.capabilities.{name}"))
    permissions = _section(spec, "permissions") or {}
    for group, values in permissions.items():
        if group not in ProtocolV1Permissions.model_fields:
            continue
        released = PERMISSIONS.get(group)
        if released is None:
            found.append((("spec", "permissions", group), f"spec.permissions.{group}"))
            continue
        for value in values if isinstance(values, list) else []:  # pyright: ignore[reportUnknownVariableType]
            if value not in released:
                found.append(
                    (("spec", "permissions", group), f"spec.permissions.{group} {value!r}")
                )
    if _section(spec, "context") is not None:
        found.append((("spec", "context"), "spec.context"))
    return found


def _lenient(model: type[BaseModel], declared: dict[str, Any]) -> dict[str, Any]:
    """``declared`` as ``model`` reads it, keeping what is valid key by key (the runtime
    lists a runner whose author typed one key wrong, as it always has)."""
    kept: dict[str, Any] = {}
    for key, value in declared.items():
        if key not in model.model_fields:
            continue
        try:
            model.model_validate({key: value})
        except ValidationError:
            if isinstance(value, list):
                good = [v for v in value if _valid(model, key, v)]  # pyright: ignore[reportUnknownVariableType]
                if good:
                    kept[key] = good
            continue
        kept[key] = value
    return model.model_validate(kept).model_dump(mode="json")


def _valid(model: type[BaseModel], key: str, value: Any) -> bool:
    try:
        model.model_validate({key: [value]})
    except ValidationError:
        return False
    return True


def protocol_v1(spec: dict[str, Any]) -> dict[str, Any] | None:
    """The Protocol v1 declaration listed beside the released manifest, or ``None`` when
    the runner declares nothing the released host would drop."""
    if not protocol_v1_only(spec):
        return None
    return {name: _lenient(model, _section(spec, name) or {}) for name, model in _SECTIONS.items()}
