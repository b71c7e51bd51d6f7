"""Host actions aimed at one plugin's components, and the component listings.

Targeted calls (icons, readmes, assets, pages, knowledge engines, parsers) are all
served by :func:`targeted_routes` from one table. Files travel as the host expects:
a file the plugin returns is pushed to the host (``__file_chunk``, the request's
context) before the answer that names its key; a file the host sent for the plugin
is passed on to the plugin's link first.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from langbot_plugin.protocol.component_calls import TARGETED, Targeted
from langbot_plugin.protocol.containers import ManifestDump
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.rpc import NotFoundError, RequestContext, Route, RPCError
from langbot_plugin.runtime.plugins import PluginHandle
from langbot_plugin.runtime.state import RuntimeState

__all__ = ["listing_routes", "storage_analysis", "targeted_routes"]

logger = logging.getLogger("langbot_plugin.runtime.targeted")


def _target(state: RuntimeState, ctx: RequestContext) -> PluginHandle:
    data = ctx.data
    identity = f"{data.get('plugin_author') or data.get('author')}/{data.get('plugin_name')}"
    handle = state.registry.find(identity, ActionScope.from_context(ctx.context))
    if handle is None:
        raise NotFoundError(f"plugin {identity} is not running here", details={"plugin": identity})
    return handle


def _route(row: Targeted, state: RuntimeState) -> Route:
    async def serve(ctx: RequestContext) -> dict[str, Any]:
        handle = _target(state, ctx)
        payload = row.payload(ctx.data)
        inner = payload.get("context")
        if (
            row.file_request
            and isinstance(inner, dict)
            and isinstance(inner.get(row.file_request), str)
        ):
            content = ctx.session.files.take(inner[row.file_request])
            key = await handle.session.send_file(content)
            payload["context"] = {**inner, row.file_request: key}
        result = await handle.session.call(row.plugin_action, payload, timeout=row.timeout)
        if row.file_result is not None:
            source, targets = row.file_result
            key = result.get(source)
            host_key = None
            if isinstance(key, str) and key:
                content = handle.session.files.take(key)
                host_key = await ctx.session.send_file(content, context=ctx.context)
            for target in targets:
                result[target] = host_key
        return result

    return Route(serve)


def targeted_routes(state: RuntimeState) -> dict[str, Route]:
    return {name: _route(row, state) for name, row in TARGETED.items()}


def _label(component: ManifestDump) -> Any:
    return component.metadata.get("label") or {"en_US": component.name}


def _engine_entry(
    handle: PluginHandle, component: ManifestDump, config: dict[str, Any]
) -> dict[str, Any]:
    spec = component.spec
    return {
        "plugin_id": handle.identity,
        "plugin_author": handle.author,
        "plugin_name": handle.name,
        "engine_name": component.name,
        "name": _label(component),
        "description": component.metadata.get("description"),
        "capabilities": config.get("capabilities") or ["doc_ingestion"],
        "creation_schema": {"schema": spec.get("creation_schema") or []},
        "retrieval_schema": {"schema": spec.get("retrieval_schema") or []},
    }


def listing_routes(state: RuntimeState) -> dict[str, Route]:
    """Knowledge engines, parsers and RAG schemas, read from the plugins' manifests."""

    def ready(ctx: RequestContext) -> list[PluginHandle]:
        return state.registry.in_scope(ActionScope.from_context(ctx.context), ready_only=True)

    async def list_engines(ctx: RequestContext) -> dict[str, Any]:
        engines: list[dict[str, Any]] = []
        for handle in ready(ctx):
            for entry in handle.container.components:
                if entry.manifest.kind == "KnowledgeEngine":
                    engines.append(_engine_entry(handle, entry.manifest, entry.component_config))
        return {"engines": engines}

    async def list_parsers(ctx: RequestContext) -> dict[str, Any]:
        parsers = [
            {
                "plugin_id": h.identity,
                "plugin_author": h.author,
                "plugin_name": h.name,
                "name": c.name,
                "label": _label(c),
                "description": c.metadata.get("description"),
                "supported_mime_types": c.spec.get("supported_mime_types") or [],
            }
            for h in ready(ctx)
            for c in h.components("Parser")
        ]
        return {"parsers": parsers}

    def schema(key: str) -> Route:
        async def serve(ctx: RequestContext) -> dict[str, Any]:
            handle = _target(state, ctx)
            wanted = ctx.data.get("engine_name")
            for component in handle.components("KnowledgeEngine"):
                if wanted in (None, "", component.name):
                    return {"schema": component.spec.get(key) or []}
            raise NotFoundError(f"plugin {handle.identity} has no knowledge engine {wanted or ''}")

        return Route(serve)

    async def diagnostic(ctx: RequestContext) -> dict[str, Any]:
        data = ctx.data
        logger.warning("host diagnostic %s: %s", data.get("code"), data.get("message"))
        plugin = data.get("plugin")
        if isinstance(plugin, dict):
            identity = f"{plugin.get('author')}/{plugin.get('name')}"
            handle = state.registry.find(identity, ActionScope.from_context(ctx.context))
            if handle is not None:
                try:
                    await handle.session.call("plugin_diagnostic", data, timeout=5)
                except RPCError as exc:
                    logger.debug("plugin %s did not take the diagnostic: %s", identity, exc)
        return {}

    async def analysis(ctx: RequestContext) -> dict[str, Any]:
        return storage_analysis(state.options.data_dir)

    return {
        "list_knowledge_engines": Route(list_engines),
        "list_parsers": Route(list_parsers),
        "get_rag_creation_settings_schema": schema("creation_schema"),
        "get_rag_retrieval_settings_schema": schema("retrieval_schema"),
        "plugin_diagnostic": Route(diagnostic),
        "get_storage_analysis": Route(analysis),
    }


def storage_analysis(data_dir: Path) -> dict[str, Any]:
    """Bytes used by each of the runtime's directories."""
    directories: list[dict[str, Any]] = []
    for name in ("artifacts", "envs", "installations"):
        path = data_dir / name
        size = sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else 0
        directories.append({"name": name, "path": str(path), "size_bytes": size})
    return {"size_bytes": sum(d["size_bytes"] for d in directories), "directories": directories}
