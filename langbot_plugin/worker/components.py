"""Serving the plugin's own files and its page, knowledge-engine and parser components.

Files (icon, readme, assets) are pushed to the runtime with ``__file_chunk`` and named
by key in the answer. Asset paths are resolved inside the plugin folder only, and only
under ``assets/`` or ``components/pages/``.
"""

from __future__ import annotations

import logging
import mimetypes
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

import anyio

from langbot_plugin.api.definition.components import BaseComponent, KnowledgeEngine, Page, Parser
from langbot_plugin.api.entities.builtin.rag.context import RetrievalResponse
from langbot_plugin.api.entities.builtin.rag.models import (
    IngestionResult,
    ParseContext,
    ParseResult,
)
from langbot_plugin.protocol import plugin_components as comp
from langbot_plugin.protocol.spec import ActionTable, Empty, Params, Result
from langbot_plugin.rpc import NotFoundError, RequestContext
from langbot_plugin.worker.loader import LoadedPlugin

__all__ = ["add_components"]

logger = logging.getLogger("langbot_plugin.worker")

ASSET_ROOTS = ("assets", "components/pages")
C = TypeVar("C", bound=BaseComponent)


def _inside(root: Path, relative: str) -> Path | None:
    pure = PurePosixPath(relative)
    if not relative or pure.is_absolute() or ".." in pure.parts or "\\" in relative:
        return None
    if len(pure.parts) == 1:
        pure = PurePosixPath("assets") / pure
    if not any(pure.as_posix().startswith(prefix + "/") for prefix in ASSET_ROOTS):
        return None
    path = root / pure
    return path if path.is_file() and path.resolve().is_relative_to(root.resolve()) else None


def _mime(path: Path, default: str = "application/octet-stream") -> str:
    return mimetypes.guess_type(path.name)[0] or default


def _pick(loaded: LoadedPlugin, kind: type[C], name: str | None) -> C:
    """The live component of ``kind`` named ``name`` (the first one without a name)."""
    components = loaded.of_kind(kind.__kind__)
    chosen = next((c for c in components if c.name == name), None) if name else None
    chosen = chosen or (components[0] if components and not name else None)
    instance = chosen.instance if chosen is not None else None
    if not isinstance(instance, kind):
        raise NotFoundError(f"{loaded.identity} has no {kind.__kind__} {name or ''}".rstrip())
    return instance


def add_components(table: ActionTable, loaded: LoadedPlugin) -> None:  # noqa: PLR0915 - one closure per action
    root = loaded.root

    async def send(ctx: RequestContext, path: Path | None) -> tuple[str, str]:
        if path is None:
            return "", ""
        content = await anyio.Path(path).read_bytes()
        key = await ctx.session.send_file(content, suffix=path.suffix.lstrip(".")[:16])
        return key, _mime(path)

    async def icon(_: Empty, ctx: RequestContext) -> comp.PluginIcon:
        rel = str(loaded.package.manifest.metadata.get("icon") or "")
        path = root / rel if rel and ".." not in PurePosixPath(rel).parts else None
        key, mime = await send(ctx, path if path is not None and path.is_file() else None)
        return comp.PluginIcon(plugin_icon_file_key=key, mime_type=mime)

    async def readme(params: comp.ReadmeRef, ctx: RequestContext) -> comp.PluginReadme:
        language = params.language or "en"
        candidates = [root / "readme" / f"README_{language}.md", root / "README.md"]
        if language in ("en", "en_US"):
            candidates.reverse()
        path = next((p for p in candidates if p.is_file()), None)
        key, _ = await send(ctx, path)
        return comp.PluginReadme(
            plugin_readme_file_key=key, mime_type="text/markdown" if key else ""
        )

    async def asset(params: comp.AssetRef, ctx: RequestContext) -> comp.AssetFile:
        path = _inside(root, params.file_key)
        if path is None:
            return comp.AssetFile(file_file_key=None, mime_type=None)
        key, mime = await send(ctx, path)
        return comp.AssetFile(file_file_key=key, mime_type=mime)

    async def page_api(params: comp.PageApiParams, ctx: RequestContext) -> comp.PageResponse:
        if not params.page_id:
            return comp.PageResponse.fail("page_id is required")
        component = loaded.find((Page.__kind__,), params.page_id)
        if component is None or not isinstance(component.instance, Page):
            return comp.PageResponse.fail(f"page {params.page_id!r} not found")
        request = comp.PageRequest(
            endpoint=params.endpoint,
            method=params.method or "POST",
            body=params.body,
            caller=params.caller,
        )
        raw: Any = await component.instance.handle_api(request)  # plugin code may return anything
        return raw if isinstance(raw, comp.PageResponse) else comp.PageResponse.ok(raw)

    async def retrieve(params: comp.RetrieveParams, ctx: RequestContext) -> RetrievalResponse:
        engine = _pick(loaded, KnowledgeEngine, params.retriever_name or None)
        return await engine.retrieve(params.retrieval_context)

    async def ingest(params: comp.IngestParams, ctx: RequestContext) -> IngestionResult:
        engine = _pick(loaded, KnowledgeEngine, params.engine_name or None)
        return await engine.ingest(params.context)

    async def delete_document(params: comp.DocumentRef, ctx: RequestContext) -> comp.Success:
        engine = _pick(loaded, KnowledgeEngine, params.engine_name or None)
        done = await engine.delete_document(params.kb_id, params.document_id)
        return comp.Success(success=bool(done))

    async def kb_created(params: comp.KnowledgeBaseConfig, ctx: RequestContext) -> comp.Success:
        engine = _pick(loaded, KnowledgeEngine, params.engine_name or None)
        await engine.on_knowledge_base_create(params.kb_id, params.config)
        return comp.Success(success=True)

    async def kb_deleted(params: comp.KnowledgeBaseRef, ctx: RequestContext) -> comp.Success:
        engine = _pick(loaded, KnowledgeEngine, params.engine_name or None)
        await engine.on_knowledge_base_delete(params.kb_id)
        return comp.Success(success=True)

    async def capabilities(params: comp.EngineRef, ctx: RequestContext) -> comp.Capabilities:
        engine = _pick(loaded, KnowledgeEngine, params.engine_name or None)
        return comp.Capabilities(capabilities=type(engine).get_capabilities())

    async def parse(params: comp.ParseParams, ctx: RequestContext) -> ParseResult:
        parser = _pick(loaded, Parser, params.parser_name or None)
        request = params.context
        context = ParseContext(
            file_content=ctx.session.files.take(request.file_key),
            mime_type=request.mime_type or "application/octet-stream",
            filename=request.filename or "document",
            metadata=dict(request.metadata),
        )
        return await parser.parse(context)

    async def diagnostic(params: Params, ctx: RequestContext) -> Result:
        logger.warning("LangBot reports %s: %s", ctx.data.get("code"), ctx.data.get("message"))
        return Result()

    table.add(comp.GET_PLUGIN_ICON, icon)
    table.add(comp.GET_PLUGIN_README, readme)
    table.add(comp.GET_PLUGIN_ASSETS_FILE, asset)
    table.add(comp.PAGE_API, page_api)
    table.add(comp.RETRIEVE_KNOWLEDGE, retrieve)
    table.add(comp.INGEST_DOCUMENT, ingest)
    table.add(comp.DELETE_DOCUMENT, delete_document)
    table.add(comp.ON_KB_CREATE, kb_created)
    table.add(comp.ON_KB_DELETE, kb_deleted)
    table.add(comp.GET_RAG_CAPABILITIES, capabilities)
    table.add(comp.PARSE_DOCUMENT, parse)
    table.add(comp.PLUGIN_DIAGNOSTIC, diagnostic)
