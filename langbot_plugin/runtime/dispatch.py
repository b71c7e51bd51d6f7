"""Routing the host's component calls (runners, commands, tools, events) to plugins."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from langbot_plugin.protocol import control_link as host
from langbot_plugin.protocol import plugin_link as plug
from langbot_plugin.protocol.containers import PluginContainer
from langbot_plugin.protocol.runners import (
    RUNNER_KINDS,
    RunResultItem,
    run_failed,
    runner_entry,
    secret_config_values,
)
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.protocol.spec import Relayed
from langbot_plugin.rpc import NotFoundError, RPCError, RPCTimeoutError
from langbot_plugin.rpc.log_context import note
from langbot_plugin.rpc.redaction import mark_secret
from langbot_plugin.runtime.inflight import TrackedPeer
from langbot_plugin.runtime.plugins import PluginHandle, PluginRegistry
from langbot_plugin.runtime.runs import LiveRun, LiveRuns

__all__ = ["call_tool", "emit_event", "execute_command", "list_runners", "run_runner"]

logger = logging.getLogger("langbot_plugin.runtime.dispatch")

#: How long past a run's deadline the runtime waits for the plugin's own timeout report.
DEADLINE_GRACE_SECONDS = 5.0
#: Idle limit between items of a run that has no deadline.
RUN_IDLE_SECONDS = 300.0


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
) -> AsyncIterator[RunResultItem]:
    """Stream a run from the plugin; failures the plugin cannot report become ``run.failed``.

    While the stream is open the run is live: the plugin's calls carrying its ``run_id``
    are checked against the grants of ``params.context``.
    """
    run_id = str(params.context.get("run_id", ""))
    identity = f"{params.plugin_author}/{params.plugin_name}"
    handle = registry.find(identity, scope)
    runner = None
    if handle is None:
        problem = ("runner.plugin_not_found", f"plugin {identity} is not running")
    elif not handle.container.enabled:
        problem = ("runner.plugin_disabled", f"plugin {identity} is disabled")
    elif handle.container.status != "initialized":
        problem = ("runner.plugin_not_initialized", f"plugin {identity} is not initialized")
    else:
        runners = handle.components(*RUNNER_KINDS)
        runner = next((c for c in runners if c.name == params.runner_name), None)
        problem = ("runner.not_found", f"plugin {identity} has no runner {params.runner_name}")
    if handle is None or runner is None:
        yield _failed(run_id, *problem, sequence=1)
        return

    mark_secret(*secret_config_values(runner.spec.get("config"), params.context.get("config")))
    live_runs.open(LiveRun.from_context(run_id, identity, params.context), scope)
    note(plugin=identity)
    try:
        peer = registry.calls.peer(handle)
        async with contextlib.aclosing(_stream_run(peer, run_id, params)) as items:
            async for item in items:
                yield item
    finally:
        live_runs.close(run_id)


def _failed(
    run_id: str, code: str, error: str, *, retryable: bool = False, sequence: int | None = None
) -> RunResultItem:
    return RunResultItem.model_validate(
        run_failed(run_id, code, error, retryable=retryable, sequence=sequence)
    )


async def _stream_run(
    peer: TrackedPeer, run_id: str, params: host.HostRunRunnerParams
) -> AsyncGenerator[RunResultItem]:
    last_sequence = 0
    request = plug.RunRunnerParams(runner_name=params.runner_name, context=params.context)
    try:
        async with contextlib.aclosing(
            plug.RUN_RUNNER.iterate(peer, request, timeout=_run_idle_timeout(params.context))
        ) as items:
            async for item in items:
                if item.sequence is not None:
                    last_sequence = max(last_sequence, item.sequence)
                yield item
    except RPCTimeoutError:
        yield _failed(
            run_id,
            "runner.timeout",
            "the runner passed its deadline",
            retryable=True,
            sequence=last_sequence + 1,
        )
    except RPCError as exc:
        logger.warning("run %s of %s failed in transit: %s", run_id, peer.plugin, exc)
        yield _failed(
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


def _command_return(item: plug.CommandReply) -> host.CommandReturnItem:
    """A host-safe CommandReturn: the released host crashes on a non-null ``error``."""
    inner = item.command_response
    text = inner.get("text")
    error = inner.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        text = f"{text}\n{message}" if text else str(message)
    files = {k: inner.get(k) for k in ("image_base64", "image_url", "file_url", "file_name")}
    return host.CommandReturnItem.model_validate({"text": text, **files})


async def execute_command(
    registry: PluginRegistry, scope: ActionScope, params: host.HostExecuteCommandParams
) -> AsyncIterator[host.CommandReturnItem]:
    handle = _command_owner(registry, scope, params)
    note(plugin=handle.identity)
    request = plug.ExecuteCommandParams(command_context=params.command_context)
    peer = registry.calls.peer(handle)
    async with contextlib.aclosing(plug.EXECUTE_COMMAND.iterate(peer, request)) as items:
        async for item in items:
            yield _command_return(item)


def _split_tool_name(name: str) -> tuple[str | None, str]:
    parts = name.split("/")
    if len(parts) == 3:
        return f"{parts[0]}/{parts[1]}", parts[2]
    return None, name


async def call_tool(
    registry: PluginRegistry, scope: ActionScope, params: host.HostCallToolParams
) -> Relayed:
    """Pass the call to the plugin owning the tool, and its answer back as it came.

    The hot path of the runtime: the host's parameters were validated on arrival and
    are sent on as their dump; the plugin's answer, which the worker checked on its way
    out and the host checks on arrival, is relayed without a second parse."""
    owner, tool = _split_tool_name(params.tool_name)
    for handle in registry.in_scope(scope, params.include_plugins, ready_only=True):
        if owner is not None and handle.identity != owner:
            continue
        if handle.has_component("Tool", tool):
            payload = params.model_dump(exclude={"include_plugins"}, exclude_unset=True)
            payload["tool_name"] = tool
            note(plugin=handle.identity)
            return Relayed(await plug.CALL_TOOL.relay(registry.calls.peer(handle), payload))
    raise NotFoundError(f"no plugin provides the tool {params.tool_name!r}")


async def emit_event(
    registry: PluginRegistry, scope: ActionScope, params: host.HostEmitEventParams
) -> host.HostEmitEventResult:
    """Offer the event to every listening plugin in priority order until one stops it."""
    event_context = params.event_context
    emitted: list[PluginContainer] = []
    sources: list[dict[str, Any]] = []
    failures: list[host.ListenerFailure] = []
    for handle in registry.in_scope(scope, params.include_plugins, ready_only=True):
        if not handle.components("EventListener"):
            continue
        before = _reply_chain(event_context)
        try:
            result = await plug.EMIT_EVENT.call(
                registry.calls.peer(handle), plug.EmitEventParams(event_context=event_context)
            )
        except RPCError as exc:
            where = exc.details.get("file"), exc.details.get("line")
            logger.warning(
                "plugin %s failed on %s: %s%s",
                handle.identity,
                event_context.get("event_name", "?"),
                exc,
                f" ({where[0]}:{where[1]})" if all(where) else "",
            )
            failures.append(
                host.ListenerFailure(
                    plugin=handle.identity, code=exc.code, error=exc.message, details=exc.details
                )
            )
            continue
        event_context = result.event_context
        if result.emitted:
            emitted.append(handle.describe())
            if _reply_chain(event_context) not in (None, before):
                sources.append(
                    {
                        "kind": "reply_message_chain",
                        "plugin": {"author": handle.author, "name": handle.name},
                    }
                )
        if event_context.get("is_prevent_postorder"):
            break
    return host.HostEmitEventResult(
        emitted_plugins=emitted,
        response_sources=sources,
        event_context=event_context,
        failures=failures,
    )


def _reply_chain(event_context: dict[str, Any]) -> Any:
    event = event_context.get("event")
    return event.get("reply_message_chain") if isinstance(event, dict) else None
