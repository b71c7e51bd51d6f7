"""Host actions aimed at one plugin's components, and the component listings.

Targeted calls (icons, readmes, assets, pages, knowledge engines, parsers) are all
served by :func:`add_targeted` from one table, as relays: the payload and the answer
pass unparsed, only the target and the files are handled here. Files travel as the host expects:
a file the plugin returns is pushed to the host (``__file_chunk``, the request's
context) before the answer that names its key; a file the host sent for the plugin
is passed on to the plugin's link first.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

from langbot_plugin.api.definition.components.manifest import I18nString
from langbot_plugin.protocol import component_calls as calls
from langbot_plugin.protocol import plugin_components as comp
from langbot_plugin.protocol.component_calls import TARGETED, PluginTarget, Targeted
from langbot_plugin.protocol.containers import ManifestDump
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.protocol.spec import ActionTable, Params, Result, parse_peer
from langbot_plugin.rpc import NotFoundError, RequestContext, Route, RPCError
from langbot_plugin.rpc.log_context import note
from langbot_plugin.runtime.plugins import PluginHandle
from langbot_plugin.runtime.state import RuntimeState

__all__ = ["add_listings", "add_targeted", "storage_analysis"]

logger = logging.getLogger("langbot_plugin.runtime.targeted")


def _target(state: RuntimeState, ctx: RequestContext) -> PluginHandle:
    identity = parse_peer(PluginTarget, ctx.data, ctx.request.action).plugin_identity
    handle = state.registry.find(identity, ActionScope.from_context(ctx.context))
    if handle is None:
        raise NotFoundError(f"plugin {identity} is not running here", details={"plugin": identity})
    return handle


def _value_at(payload: dict[str, Any], path: str) -> object:
    """The value at a dotted ``path`` (``"context.file_key"``), or ``None``."""
    value: object = payload
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _with_value(payload: dict[str, Any], path: str, value: object) -> dict[str, Any]:
    """A copy of ``payload`` with ``value`` at ``path`` (the mappings on the way copied)."""
    head, _, rest = path.partition(".")
    if not rest:
        return {**payload, head: value}
    inner = payload.get(head)
    return {**payload, head: _with_value(inner if isinstance(inner, dict) else {}, rest, value)}


def _route(row: Targeted, state: RuntimeState) -> Route:
    plugin_files = row.plugin.files
    host_files = row.host.files

    async def serve(ctx: RequestContext) -> dict[str, Any]:
        handle = _target(state, ctx)
        payload = row.plugin_payload(ctx.data)
        for path in row.plugin.request_files:
            key = _value_at(payload, path)
            if isinstance(key, str):
                pushed = await handle.session.send_file(ctx.session.files.take(key))
                payload = _with_value(payload, path, pushed)
        note(plugin=handle.identity)
        result = await row.plugin.relay(state.registry.calls.peer(handle), payload)
        if plugin_files:
            key = result.get(plugin_files[0])
            host_key = None
            if isinstance(key, str) and key:
                content = handle.session.files.take(key)
                host_key = await ctx.session.send_file(content, context=ctx.context)
            for target in host_files:
                result[target] = host_key
        return result

    return Route(serve)


def add_targeted(table: ActionTable, state: RuntimeState) -> None:
    """Every host call aimed at one plugin's components, relayed to that plugin."""
    for row in TARGETED.values():
        table.add_route(row.host, _route(row, state))


def _i18n(value: object, fallback: str) -> dict[str, str | None]:
    """An I18n text as the reference lists it: each locale it knows, ``None`` where unset
    (a plain string is the English text; ``fallback`` when there is none)."""
    texts = cast(dict[object, object], value) if isinstance(value, dict) else {}
    given = {str(k): v for k, v in texts.items() if isinstance(v, str)}
    if not isinstance(value, dict) and value:
        given["en_US"] = str(value)
    text = I18nString.model_validate({"en_US": fallback, **given})
    return text.model_dump(include=set(I18nString.model_fields))


def _texts(component: ManifestDump) -> dict[str, Any]:
    """``name`` (the label, as the host shows it) and ``description`` of a listing."""
    metadata = component.metadata
    return {
        "name": _i18n(metadata.get("label"), component.name),
        "description": _i18n(metadata.get("description"), ""),
    }


def _engine_entry(
    handle: PluginHandle, component: ManifestDump, config: dict[str, Any]
) -> dict[str, Any]:
    spec = component.spec
    return {
        "plugin_id": handle.identity,
        "plugin_author": handle.author,
        "plugin_name": handle.name,
        "engine_name": component.name,
        **_texts(component),
        "capabilities": config.get("capabilities") or ["doc_ingestion"],
        "creation_schema": {"schema": spec.get("creation_schema") or []},
        "retrieval_schema": {"schema": spec.get("retrieval_schema") or []},
    }


def add_listings(table: ActionTable, state: RuntimeState) -> None:
    """Knowledge engines, parsers and RAG schemas, read from the plugins' manifests."""

    def ready(ctx: RequestContext) -> list[PluginHandle]:
        return state.registry.in_scope(ActionScope.from_context(ctx.context), ready_only=True)

    async def list_engines(_: Params, ctx: RequestContext) -> calls.Engines:
        engines: list[dict[str, Any]] = []
        for handle in ready(ctx):
            for entry in handle.container.components:
                if entry.manifest.kind == "KnowledgeEngine":
                    engines.append(_engine_entry(handle, entry.manifest, entry.component_config))
        return calls.Engines(engines=engines)

    async def list_parsers(_: Params, ctx: RequestContext) -> calls.ParserEntries:
        parsers = [
            {
                "plugin_id": h.identity,
                "plugin_author": h.author,
                "plugin_name": h.name,
                "parser_name": c.name,
                **_texts(c),
                "supported_mime_types": c.spec.get("supported_mime_types") or [],
            }
            for h in ready(ctx)
            for c in h.components("Parser")
        ]
        return calls.ParserEntries(parsers=parsers)

    def schema(key: str) -> Callable[[calls.EngineSchemaRef, RequestContext], Awaitable[Any]]:
        async def serve(params: calls.EngineSchemaRef, ctx: RequestContext) -> calls.RagSchema:
            handle = _target(state, ctx)
            wanted = params.engine_name
            for component in handle.components("KnowledgeEngine"):
                if wanted in (None, "", component.name):
                    return calls.RagSchema(schema=component.spec.get(key) or [])
            raise NotFoundError(f"plugin {handle.identity} has no knowledge engine {wanted or ''}")

        return serve

    async def diagnostic(params: Params, ctx: RequestContext) -> Result:
        data = ctx.data
        logger.warning("host diagnostic %s: %s", data.get("code"), data.get("message"))
        plugin = data.get("plugin")
        if isinstance(plugin, dict):
            identity = f"{plugin.get('author')}/{plugin.get('name')}"
            handle = state.registry.find(identity, ActionScope.from_context(ctx.context))
            if handle is not None:
                try:
                    await comp.PLUGIN_DIAGNOSTIC.call(handle.session, params)
                except RPCError as exc:
                    logger.debug("plugin %s did not take the diagnostic: %s", identity, exc)
        return Result()

    async def analysis(_: Params, ctx: RequestContext) -> calls.StorageAnalysis:
        return calls.StorageAnalysis.model_validate(storage_analysis(state.options.data_dir))

    table.add(calls.LIST_KNOWLEDGE_ENGINES, list_engines)
    table.add(calls.LIST_PARSERS, list_parsers)
    table.add(calls.GET_RAG_CREATION_SETTINGS_SCHEMA, schema("creation_schema"))
    table.add(calls.GET_RAG_RETRIEVAL_SETTINGS_SCHEMA, schema("retrieval_schema"))
    table.add(calls.PLUGIN_DIAGNOSTIC, diagnostic)
    table.add(calls.GET_STORAGE_ANALYSIS, analysis)


def storage_analysis(data_dir: Path) -> dict[str, Any]:
    """Bytes used by each of the runtime's directories."""
    directories: list[dict[str, Any]] = []
    for name in ("artifacts", "envs", "installations"):
        path = data_dir / name
        size = sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else 0
        directories.append({"name": name, "path": str(path), "size_bytes": size})
    return {"size_bytes": sum(d["size_bytes"] for d in directories), "directories": directories}
