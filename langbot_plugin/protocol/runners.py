"""Wire shapes around agent runners: the listing entry, runtime-made results, and
what counts as an answer.

No blank message, no blank success (docs/agent-runner.md): :class:`OutputWatch` holds
back blank messages and turns a ``run.completed`` that never answered into
``run.failed`` :data:`EMPTY_RESULT` (``finish_reason`` :data:`NO_REPLY` is a runner's
explicit silence); the worker and the host both apply it. The released host drops a
runner whose ``manifest`` has keys or values it does not know, so :func:`runner_entry`
keeps exactly those it accepts; Protocol v1's go beside it
(:mod:`langbot_plugin.protocol.runner_declaration`).
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
from langbot_plugin.protocol.host_api import messaging
from langbot_plugin.protocol.spec import Result
from langbot_plugin.rpc.redaction import redact

__all__ = [
    "CAPABILITIES",
    "DELIVERING_TOOLS",
    "EMPTY",
    "EMPTY_RESULT",
    "HOLD",
    "NO_REPLY",
    "PASS",
    "PERMISSIONS",
    "RUNNER_KINDS",
    "OutputWatch",
    "RunResultItem",
    "empty_result",
    "run_failed",
    "runner_entry",
    "runner_id",
    "secret_config_values",
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


#: The form item type of a config field whose value is a secret (LangBot's ``secret``).
SECRET_FIELD_TYPE = "secret"


def secret_config_values(schema: Any, config: Any) -> list[str]:
    """The values in ``config`` of the fields ``schema`` (a manifest's ``spec.config``
    list) declares ``type: secret``: what must never reach a log or a record."""
    if not isinstance(schema, list) or not isinstance(config, dict):
        return []
    values: list[str] = []
    for item in schema:  # pyright: ignore[reportUnknownVariableType]
        if isinstance(item, dict) and item.get("type") == SECRET_FIELD_TYPE:  # pyright: ignore[reportUnknownMemberType]
            value = config.get(item.get("name"))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
            if isinstance(value, str) and value:
                values.append(value)
    return values


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
    description = _i18n(meta.get("description"))
    usages = [u for u in spec.get("usages", ["agent"]) if u in _USAGES] or ["agent"]
    patterns = spec.get("events") if "event" in usages else None
    capabilities = _capabilities(spec)
    permissions = _permissions(spec)
    config = _config_schema(spec)
    manifest: dict[str, Any] = {
        "id": runner_id(author, plugin, name),
        "name": name,
        "label": _i18n(meta.get("label")) or {"en_US": name},
        "component_kind": "Runner",
        "usages": usages,
        "supported_event_patterns": patterns if isinstance(patterns, list) and patterns else ["*"],
        "description": description,
        "capabilities": capabilities,
        "permissions": permissions,
        "config_schema": config,
        "metadata": {"plugin_author": author, "plugin_name": plugin, "runner_name": name},
    }
    entry: dict[str, Any] = {
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
    from langbot_plugin.protocol import runner_declaration  # it reads this module's names

    declared = runner_declaration.protocol_v1(spec)
    if declared is not None:
        entry[runner_declaration.DECLARATION_KEY] = declared
    return entry


#: ``run.failed`` code of a run that ended without any answer.
EMPTY_RESULT = "empty_result"
#: ``finish_reason`` of a ``run.completed`` that has nothing to say on purpose.
NO_REPLY = "no_reply"

#: Traced context calls that deliver a message themselves (``ctx.reply``,
#: ``reply_stream``, ``send_message``): once one completes, the run has answered.
DELIVERING_TOOLS = frozenset(
    {
        messaging.EVENT_REPLY_TOOL,
        messaging.traced_platform_call(messaging.PLATFORM_SEND_MESSAGE),
    }
)


def _blank(content: Any) -> bool:
    if content is None:
        return True
    if isinstance(content, str):
        return not content.strip()
    if isinstance(content, list):  # blank unless a part has text, or is an image, a file ...
        parts: list[Any] = content  # pyright: ignore[reportUnknownVariableType]
        return all(
            isinstance(part, dict) and part.get("type") == "text" and _blank(part.get("text"))  # pyright: ignore[reportUnknownMemberType]
            for part in parts
        )
    return False


def _message_blank(message: Any) -> bool:
    if not isinstance(message, dict):
        return message is None
    if message.get("tool_calls"):  # pyright: ignore[reportUnknownMemberType]
        return False
    return _blank(message.get("content"))  # pyright: ignore[reportUnknownMemberType]


#: :meth:`OutputWatch.admit`'s verdicts: send the result, hold it back, or end the run
#: with :func:`empty_result` instead.
PASS, HOLD, EMPTY = "pass", "hold", "empty"


class OutputWatch:
    """Follows one run's results: holds back blank messages, tells a blank
    ``run.completed`` apart (see the module docstring)."""

    __slots__ = ("produced",)

    def __init__(self) -> None:
        self.produced = False

    def admit(self, kind: str, data: Any) -> str:
        """:data:`PASS` (and note it), :data:`HOLD` or :data:`EMPTY` for one result."""
        if self.blank(kind, data):
            return EMPTY
        if self.held_back(kind, data):
            return HOLD
        self.see(kind, data)
        return PASS

    def held_back(self, kind: str, data: Any) -> bool:
        """Whether this result is a blank message no host should see."""
        payload: dict[str, Any] = data if isinstance(data, dict) else {}  # pyright: ignore[reportUnknownVariableType]
        if kind == "message.completed":
            return _message_blank(payload.get("message")) and not payload.get("file_ids")
        if kind == "message.delta" and not self.produced:
            chunk = payload.get("chunk")
            text = chunk.get("all_content") if isinstance(chunk, dict) else None  # pyright: ignore[reportUnknownMemberType]
            return _message_blank(chunk) and _blank(text)
        return False

    def see(self, kind: str, data: Any) -> None:
        """Note one result (``data``: its payload)."""
        if self.produced:
            return
        payload: dict[str, Any] = data if isinstance(data, dict) else {}  # pyright: ignore[reportUnknownVariableType]
        if kind == "message.delta":
            chunk = payload.get("chunk")
            if isinstance(chunk, dict):
                text = chunk.get("all_content")  # pyright: ignore[reportUnknownMemberType]
                self.produced = not (_message_blank(chunk) and _blank(text))
        elif kind in ("message.completed", "run.completed"):
            self.produced = not _message_blank(payload.get("message"))
        elif kind == "action.requested":
            self.produced = True
        elif kind == "tool.call.completed":
            delivered = payload.get("tool_name") in DELIVERING_TOOLS
            self.produced = delivered and not payload.get("error")

    def blank(self, kind: str, data: Any) -> bool:
        """Whether this (terminal) result would end the run as a blank success."""
        if kind != "run.completed" or self.produced:
            return False
        payload: dict[str, Any] = data if isinstance(data, dict) else {}  # pyright: ignore[reportUnknownVariableType]
        return payload.get("finish_reason") != NO_REPLY and _message_blank(payload.get("message"))


def empty_result(run_id: str, sequence: int | None) -> dict[str, Any]:
    """The ``run.failed`` that replaces a blank success."""
    return run_failed(
        run_id,
        EMPTY_RESULT,
        "the runner finished without any message; a runner with nothing to say ends "
        f"run.completed with finish_reason {NO_REPLY!r}",
        sequence=sequence,
    )


def run_failed(
    run_id: str, code: str, error: str, *, retryable: bool = False, sequence: int | None = None
) -> dict[str, Any]:
    """A ``run.failed`` result made by the runtime or the worker (``error`` redacted)."""
    return {
        "run_id": run_id,
        "type": "run.failed",
        "data": {"error": redact(error), "code": code, "retryable": retryable},
        "usage": None,
        "sequence": sequence,
        "timestamp": int(time.time()),
    }
