"""Routing the host's component calls (runners, commands, tools, events) to plugins."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from langbot_plugin.protocol import control_link as host
from langbot_plugin.protocol import plugin_link as plug
from langbot_plugin.protocol.runners import RUNNER_KINDS, run_failed, runner_entry
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.rpc import NotFoundError, RPCError, RPCTimeoutError
from langbot_plugin.runtime.plugins import PluginHandle, PluginRegistry
from langbot_plugin.runtime.runs import LiveRun, LiveRuns

__all__ = ["call_tool", "emit_event", "execute_command", "list_runners", "run_runner"]

logger = logging.getLogger("langbot_plugin.runtime.dispatch")

#: How long past a run's deadline the runtime waits for the plugin's own timeout report.
DEADLINE_GRACE_SECONDS = 5.0
#: Idle limit between items of a run that has no deadline.
RUN_IDLE_SECONDS = 300.0
COMMAND_IDLE_SECONDS = 180.0


def list_runners(
    registry: PluginRegistry, scope: ActionScope, include: list[str] | None
) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for handle in registry.in_scope(scope, include, ready_only=True):
        version = str(handle.container.manifest.metadata.get("version") or "")
        for component in handle.components(*RUNNER_KINDS):
            entries.append(runner_entry(handle.author, handle.name, version, component))
    return entries


def _run_idle_timeout(context: dict[str, Any]) -> float:
    runtime = context.get("runtime")
    deadline = runtime.get("deadline_at") if isinstance(runtime, dict) else None
    if isinstance(deadline, int | float) and not isinstance(deadline, bool):
        return max(0.5, deadline - time.time() + DEADLINE_GRACE_SECONDS)
    return RUN_IDLE_SECONDS


async def run_runner(
    registry: PluginRegistry,
    live_runs: LiveRuns,
    scope: ActionScope,
    params: host.HostRunRunnerParams,
) -> AsyncIterator[dict[str, Any]]:
    """Stream a run from the plugin; failures the plugin cannot report become ``run.failed``.

    While the stream is open the run is live: the plugin's calls carrying its ``run_id``
    are checked against the grants of ``params.context``.
    """
    run_id = str(params.context.get("run_id", ""))
    identity = f"{params.plugin_author}/{params.plugin_name}"
    handle = registry.find(identity, scope)
    problem: tuple[str, str] | None = None
    if handle is None:
        problem = ("runner.plugin_not_found", f"plugin {identity} is not running")
    elif not handle.container.enabled:
        problem = ("runner.plugin_disabled", f"plugin {identity} is disabled")
    elif handle.container.status != "initialized":
        problem = ("runner.plugin_not_initialized", f"plugin {identity} is not initialized")
    runner = None
    if handle is not None and problem is None:
        runner = next(
            (c for c in handle.components(*RUNNER_KINDS) if c.name == params.runner_name), None
        )
        if runner is None:
            problem = ("runner.not_found", f"plugin {identity} has no runner {params.runner_name}")
    if problem is not None or handle is None or runner is None:
        code, text = problem or ("runner.plugin_not_found", identity)
        yield run_failed(run_id, code, text, sequence=1)
        return

    permissions = runner.spec.get("permissions")
    live_runs.open(
        LiveRun.from_context(
            run_id, identity, params.context, permissions if isinstance(permissions, dict) else {}
        )
    )
    try:
        async for item in _stream_run(handle, run_id, identity, params):
            yield item
    finally:
        live_runs.close(run_id)


async def _stream_run(
    handle: PluginHandle, run_id: str, identity: str, params: host.HostRunRunnerParams
) -> AsyncIterator[dict[str, Any]]:
    last_sequence = 0
    try:
        async with handle.session.stream(
            plug.RUN_RUNNER.name,
            {"runner_name": params.runner_name, "context": params.context},
            timeout=_run_idle_timeout(params.context),
        ) as items:
            async for item in items:
                sequence = item.get("sequence")
                if isinstance(sequence, int) and not isinstance(sequence, bool):
                    last_sequence = max(last_sequence, sequence)
                yield item
    except RPCTimeoutError:
        yield run_failed(
            run_id,
            "runner.timeout",
            "the runner passed its deadline",
            retryable=True,
            sequence=last_sequence + 1,
        )
    except RPCError as exc:
        logger.warning("run %s of %s failed in transit: %s", run_id, identity, exc)
        yield run_failed(
            run_id,
            "runner.forward_exception",
            f"{exc.wire_type}: {exc.message}",
            sequence=last_sequence + 1,
        )


def _command_owner(
    registry: PluginRegistry, scope: ActionScope, params: host.HostExecuteCommandParams
) -> PluginHandle:
    name = str(params.command_context.get("command", ""))
    for handle in registry.in_scope(scope, params.include_plugins, ready_only=True):
        if any(c.name == name for c in handle.components("Command")):
            return handle
    raise NotFoundError(f"no plugin provides the command {name!r}", details={"command": name})


def _command_return(item: dict[str, Any]) -> dict[str, Any]:
    """A host-safe CommandReturn: the released host crashes on a non-null ``error``."""
    inner = item.get("command_response", item)
    inner = inner if isinstance(inner, dict) else {}
    text = inner.get("text")
    error = inner.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        text = f"{text}\n{message}" if text else str(message)
    return {
        "text": text,
        "image_base64": inner.get("image_base64"),
        "image_url": inner.get("image_url"),
        "file_url": inner.get("file_url"),
        "file_name": inner.get("file_name"),
        "error": None,
    }


async def execute_command(
    registry: PluginRegistry, scope: ActionScope, params: host.HostExecuteCommandParams
) -> AsyncIterator[dict[str, Any]]:
    handle = _command_owner(registry, scope, params)
    async with handle.session.stream(
        plug.EXECUTE_COMMAND.name,
        {"command_context": params.command_context},
        timeout=COMMAND_IDLE_SECONDS,
    ) as items:
        async for item in items:
            yield _command_return(item)


def _split_tool_name(name: str) -> tuple[str | None, str]:
    parts = name.split("/")
    if len(parts) == 3:
        return f"{parts[0]}/{parts[1]}", parts[2]
    return None, name


async def call_tool(
    registry: PluginRegistry, scope: ActionScope, params: host.HostCallToolParams
) -> dict[str, Any]:
    """Pass the call to the plugin owning the tool, and its answer back as it came."""
    owner, tool = _split_tool_name(params.tool_name)
    for handle in registry.in_scope(scope, params.include_plugins, ready_only=True):
        if owner is not None and handle.identity != owner:
            continue
        if handle.has_component("Tool", tool):
            payload = params.model_dump(exclude={"include_plugins"})
            payload["tool_name"] = tool
            return await handle.session.call(plug.CALL_TOOL.name, payload, timeout=180.0)
    raise NotFoundError(f"no plugin provides the tool {params.tool_name!r}")


async def emit_event(
    registry: PluginRegistry, scope: ActionScope, params: host.HostEmitEventParams
) -> dict[str, Any]:
    """Offer the event to every listening plugin in priority order until one stops it."""
    event_context = params.event_context
    emitted: list[dict[str, Any]] = []
    sources: list[dict[str, Any]] = []
    for handle in registry.in_scope(scope, params.include_plugins, ready_only=True):
        if not handle.components("EventListener"):
            continue
        before = _reply_chain(event_context)
        try:
            result = await plug.EMIT_EVENT.call(
                handle.session, {"event_context": event_context}, timeout=180.0
            )
        except RPCError as exc:
            logger.warning(
                "plugin %s failed on %s: %s", handle.identity, _event_name(event_context), exc
            )
            continue
        event_context = result.event_context
        if result.emitted:
            emitted.append(handle.describe().model_dump(mode="json"))
            if _reply_chain(event_context) not in (None, before):
                sources.append(
                    {
                        "kind": "reply_message_chain",
                        "plugin": {"author": handle.author, "name": handle.name},
                    }
                )
        if event_context.get("is_prevent_postorder"):
            break
    return {"emitted_plugins": emitted, "response_sources": sources, "event_context": event_context}


def _reply_chain(event_context: dict[str, Any]) -> Any:
    event = event_context.get("event")
    return event.get("reply_message_chain") if isinstance(event, dict) else None


def _event_name(event_context: dict[str, Any]) -> str:
    return str(event_context.get("event_name", "?"))
