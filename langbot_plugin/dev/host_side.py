"""The host side of a ``lbp dev`` session: what LangBot would grant, hand over and log.

- :func:`runner_config` and :func:`runner_resources`: a runner's config and grants as a
  pipeline would hold them (defaults, the session's model in model selectors; the
  operations its manifest's ``permissions`` ask for, never more).
- :func:`watched`: a host tool that reports each call and its result as ``tool.call``
  and ``tool.result`` events.
- :class:`Announcing`: the local host as the runtime sees it, a ``host.call`` event per
  call the plugin makes, named as the plugin API names it (:func:`api_name`).
- :func:`runtime_logs`: the in-process runtime's warnings as ``log`` events.
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectSendStream

from langbot_plugin.dev.events import EventHub
from langbot_plugin.host import LocalHost
from langbot_plugin.host.run_context import make_resources
from langbot_plugin.host.scripted import HostTool
from langbot_plugin.protocol.host_link import (
    FORWARDED,
    GET_PLUGIN_SETTINGS,
    INITIALIZE_PLUGIN_SETTINGS,
)
from langbot_plugin.protocol.table import ActionTable
from langbot_plugin.rpc import RequestContext
from langbot_plugin.rpc.routes import before

__all__ = [
    "Announcing",
    "api_name",
    "component_name",
    "runner_config",
    "runner_resources",
    "runtime_logs",
    "watched",
]

#: Host actions not worth a ``host.call`` event (the registration handshake).
QUIET_ACTIONS = frozenset({INITIALIZE_PLUGIN_SETTINGS.name, GET_PLUGIN_SETTINGS.name})
#: Config item types that name a model: the session's model is filled in.
MODEL_SELECTORS = frozenset({"llm-model-selector", "model-selector"})
#: Runtime log records buffered for the session's loop before further ones are dropped.
LOG_BUFFER = 1000


def component_name(entry: dict[str, Any]) -> str:
    """The name of a listed tool or command (``manifest.metadata.name``)."""
    return str(((entry.get("manifest") or {}).get("metadata") or {}).get("name") or "")


def runner_config(
    manifest: dict[str, Any], model_uuid: str, overrides: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A runner's config as a pipeline would hold it: each item's default, the session's
    model in model selectors, then ``overrides``. ``manifest`` is the runner's listing
    (``config_schema``) or its component manifest (``spec.config``)."""
    config: dict[str, Any] = {}
    items = manifest.get("config_schema") or (manifest.get("spec") or {}).get("config") or []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or not item.get("name"):
            continue
        name, kind = str(item["name"]), str(item.get("type") or "")
        value = item.get("default")
        if kind in MODEL_SELECTORS:
            value = model_uuid
        elif kind == "model-fallback-selector":
            value = {"primary": model_uuid, "fallbacks": []}
        config[name] = value
    config.update(overrides or {})
    return config


def runner_resources(manifest: dict[str, Any], local: LocalHost) -> dict[str, Any]:
    """What LangBot would grant the runner of this listing: each model and tool of the
    local host with the operations its ``permissions`` ask for (none for an empty
    list), and plugin and workspace storage."""
    permissions = manifest.get("permissions") or {}
    model_ops = [str(op) for op in permissions.get("models") or []]
    tool_ops = [str(op) for op in permissions.get("tools") or []]
    return make_resources(
        models=dict.fromkeys(local.models, model_ops) if model_ops else None,
        tools=dict.fromkeys(local.tools, tool_ops) if tool_ops else None,
        plugin_storage=True,
        workspace_storage=True,
    )


def watched(tool: HostTool, events: EventHub) -> HostTool:
    """``tool``, reporting each call (``tool.call``) and its result or error
    (``tool.result``), a run's call (``run_function``) as any other."""
    inner, in_run = tool.function, tool.run_function

    async def reported(call: Callable[[], Any], parameters: dict[str, Any]) -> Any:
        await events.emit("tool.call", {"name": tool.name, "arguments": parameters})
        try:
            result = call()
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:
            await events.emit("tool.result", {"name": tool.name, "error": str(exc)})
            raise
        await events.emit("tool.result", {"name": tool.name, "result": result})
        return result

    async def function(parameters: dict[str, Any]) -> Any:
        return await reported(lambda: inner(parameters), parameters)

    tool.function = function
    if in_run is not None:

        async def run_function(run_id: str, parameters: dict[str, Any]) -> Any:
            return await reported(lambda: in_run(run_id, parameters), parameters)

        tool.run_function = run_function
    return tool


#: The runtime -> host actions that serve several plugin API calls, back to those names:
#: (host action, storage owner) -> the name the plugin called (``set_plugin_storage``...).
_API_NAMES = {
    (row.host_spec.name, row.owner.value): row.action
    for row in FORWARDED.values()
    if row.target is not None and row.owner is not None
}


def api_name(action: str, data: dict[str, Any]) -> str:
    """The plugin API's name for a call the host received: the runtime renames the
    storage calls (``get_plugin_storage`` reaches the host as ``get_binary_storage``)."""
    return _API_NAMES.get((action, str(data.get("owner_type"))), action)


class Announcing(ActionTable):
    """The local host as the runtime sees it, with a ``host.call`` event per call."""

    def __init__(self, local: LocalHost, events: EventHub) -> None:
        super().__init__()
        self.local = local
        self.events = events
        self.mount(local, before(self._note), when=lambda action: action not in QUIET_ACTIONS)

    async def _note(self, ctx: RequestContext) -> None:
        data = ctx.data
        run_id = data.get("run_id") if isinstance(data.get("run_id"), str) else None
        shown: dict[str, Any] = {"action": api_name(ctx.request.action, data)}
        if isinstance(data.get("key"), str) and data["key"]:
            shown["key"] = data["key"]
        if "llm_model_uuid" in data:
            shown["model"] = data["llm_model_uuid"]
            shown["messages"] = len(data.get("messages") or [])
        await self.events.emit("host.call", shown, run_id)


class _EventLogHandler(logging.Handler):
    """Hands log records to the session's event loop (from any thread); when the
    buffer is full a record is counted and dropped rather than blocking the logger."""

    def __init__(self, send: MemoryObjectSendStream[dict[str, Any]]) -> None:
        super().__init__(logging.WARNING)
        self.send = send
        self.token = anyio.lowlevel.current_token()
        self.thread = threading.get_ident()
        self.dropped = 0

    def emit(self, record: logging.LogRecord) -> None:
        entry = {"level": record.levelname, "logger": record.name, "text": record.getMessage()}
        try:
            if threading.get_ident() == self.thread:
                self.send.send_nowait(entry)
            else:
                anyio.from_thread.run_sync(self.send.send_nowait, entry, token=self.token)
        except (anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self.dropped += 1
        except RuntimeError:  # the loop is gone (the session is closing)
            self.dropped += 1


@asynccontextmanager
async def runtime_logs(events: EventHub, tg: TaskGroup) -> AsyncGenerator[None]:
    """The in-process runtime's log records (warnings and up) as ``log`` events."""
    send, receive = anyio.create_memory_object_stream[dict[str, Any]](LOG_BUFFER)
    handler = _EventLogHandler(send)
    target = logging.getLogger("langbot_plugin.runtime")
    target.addHandler(handler)

    async def forward() -> None:
        async with receive:
            async for record in receive:
                await events.emit("log", {"source": "runtime", **record})

    tg.start_soon(forward)
    try:
        yield
    finally:
        target.removeHandler(handler)
        send.close()
