"""Serving the plugin's own files and its page, knowledge-engine and parser components.

Files (icon, readme, assets) are pushed to the runtime with ``__file_chunk`` and named
by key in the answer. Asset paths are resolved inside the plugin folder only, and only
under ``assets/`` or ``components/pages/``.
"""

from __future__ import annotations

import logging
import mimetypes
from pathlib import Path, PurePosixPath
from typing import Any

import anyio

from langbot_plugin.rpc import InvalidParamsError, NotFoundError, RequestContext, Route
from langbot_plugin.worker.loader import LoadedComponent, LoadedPlugin

__all__ = ["component_routes"]

logger = logging.getLogger("langbot_plugin.worker")

ASSET_ROOTS = ("assets", "components/pages")


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


def _pick(loaded: LoadedPlugin, kind: str, name: str | None) -> LoadedComponent:
    components = loaded.of_kind(kind)
    chosen = next((c for c in components if c.name == name), None) if name else None
    chosen = chosen or (components[0] if components and not name else None)
    if chosen is None or chosen.instance is None:
        raise NotFoundError(f"{loaded.identity} has no {kind} {name or ''}".rstrip())
    return chosen


def component_routes(loaded: LoadedPlugin) -> dict[str, Route]:  # noqa: PLR0915 - one closure per action
    root = loaded.root

    async def send(ctx: RequestContext, path: Path | None) -> tuple[str, str]:
        if path is None:
            return "", ""
        content = await anyio.Path(path).read_bytes()
        key = await ctx.session.send_file(content, suffix=path.suffix.lstrip(".")[:16])
        return key, _mime(path)

    async def icon(ctx: RequestContext) -> dict[str, Any]:
        rel = str(loaded.package.manifest.metadata.get("icon") or "")
        path = root / rel if rel and ".." not in PurePosixPath(rel).parts else None
        key, mime = await send(ctx, path if path is not None and path.is_file() else None)
        return {"plugin_icon_file_key": key, "mime_type": mime}

    async def readme(ctx: RequestContext) -> dict[str, Any]:
        language = str(ctx.data.get("language") or "en")
        candidates = [root / "readme" / f"README_{language}.md", root / "README.md"]
        if language in ("en", "en_US"):
            candidates.reverse()
        path = next((p for p in candidates if p.is_file()), None)
        key, _ = await send(ctx, path)
        return {"plugin_readme_file_key": key, "mime_type": "text/markdown" if key else ""}

    async def asset(ctx: RequestContext) -> dict[str, Any]:
        path = _inside(root, str(ctx.data.get("file_key") or ""))
        if path is None:
            return {"file_file_key": None, "mime_type": None}
        key, mime = await send(ctx, path)
        return {"file_file_key": key, "mime_type": mime}

    async def page_api(ctx: RequestContext) -> dict[str, Any]:
        from langbot_plugin.api.definition.components.page import Page, PageRequest, PageResponse

        page_id = str(ctx.data.get("page_id") or "")
        if not page_id:
            return PageResponse.fail("page_id is required").model_dump(mode="json")
        component = next((c for c in loaded.of_kind("Page") if c.name == page_id), None)
        if component is None or not isinstance(component.instance, Page):
            return PageResponse.fail(f"page {page_id!r} not found").model_dump(mode="json")
        request = PageRequest(
            endpoint=str(ctx.data.get("endpoint") or ""),
            method=str(ctx.data.get("method") or "POST"),
            body=ctx.data.get("body"),
            caller=ctx.data.get("caller"),
        )
        raw: Any = await component.instance.handle_api(request)  # plugin code may return anything
        response = raw if isinstance(raw, PageResponse) else PageResponse.ok(raw)
        return response.model_dump(mode="json")

    async def retrieve(ctx: RequestContext) -> dict[str, Any]:
        from langbot_plugin.api.entities.builtin.rag.context import RetrievalContext

        engine = _pick(loaded, "KnowledgeEngine", ctx.data.get("retriever_name") or None)
        context = RetrievalContext.model_validate(ctx.data.get("retrieval_context") or {})
        response = await engine.instance.retrieve(context)  # type: ignore[union-attr]
        return response.model_dump(mode="json")

    async def ingest(ctx: RequestContext) -> dict[str, Any]:
        from langbot_plugin.api.entities.builtin.rag.models import IngestionContext

        engine = _pick(loaded, "KnowledgeEngine", ctx.data.get("engine_name") or None)
        context = IngestionContext.model_validate(ctx.data.get("context") or {})
        result = await engine.instance.ingest(context)  # type: ignore[union-attr]
        return result.model_dump(mode="json")

    async def delete_document(ctx: RequestContext) -> dict[str, Any]:
        engine = _pick(loaded, "KnowledgeEngine", ctx.data.get("engine_name") or None)
        done = await engine.instance.delete_document(  # type: ignore[union-attr]
            str(ctx.data.get("kb_id")), str(ctx.data.get("document_id"))
        )
        return {"success": bool(done)}

    async def kb_created(ctx: RequestContext) -> dict[str, Any]:
        engine = _pick(loaded, "KnowledgeEngine", ctx.data.get("engine_name") or None)
        config = ctx.data.get("config") or {}
        await engine.instance.on_knowledge_base_create(str(ctx.data.get("kb_id")), config)  # type: ignore[union-attr]
        return {"success": True}

    async def kb_deleted(ctx: RequestContext) -> dict[str, Any]:
        engine = _pick(loaded, "KnowledgeEngine", ctx.data.get("engine_name") or None)
        await engine.instance.on_knowledge_base_delete(str(ctx.data.get("kb_id")))  # type: ignore[union-attr]
        return {"success": True}

    async def capabilities(ctx: RequestContext) -> dict[str, Any]:
        engine = _pick(loaded, "KnowledgeEngine", ctx.data.get("engine_name") or None)
        return {"capabilities": type(engine.instance).get_capabilities()}  # type: ignore[union-attr]

    async def parse(ctx: RequestContext) -> dict[str, Any]:
        from langbot_plugin.api.entities.builtin.rag.models import ParseContext

        parser = _pick(loaded, "Parser", ctx.data.get("parser_name") or None)
        request = ctx.data.get("context") or {}
        key = request.get("file_key") if isinstance(request, dict) else None
        if not isinstance(key, str):
            raise InvalidParamsError("parse_document needs context.file_key")
        context = ParseContext(
            file_content=ctx.session.files.take(key),
            mime_type=str(request.get("mime_type") or "application/octet-stream"),
            filename=str(request.get("filename") or "document"),
            metadata=dict(request.get("metadata") or {}),
        )
        result = await parser.instance.parse(context)  # type: ignore[union-attr]
        return result.model_dump(mode="json")

    async def diagnostic(ctx: RequestContext) -> dict[str, Any]:
        logger.warning("LangBot reports %s: %s", ctx.data.get("code"), ctx.data.get("message"))
        return {}

    return {
        "get_plugin_icon": Route(icon),
        "get_plugin_readme": Route(readme),
        "get_plugin_assets_file": Route(asset),
        "page_api": Route(page_api),
        "retrieve_knowledge": Route(retrieve),
        "ingest_document": Route(ingest),
        "delete_document": Route(delete_document),
        "on_kb_create": Route(kb_created),
        "on_kb_delete": Route(kb_deleted),
        "get_rag_capabilities": Route(capabilities),
        "parse_document": Route(parse),
        "plugin_diagnostic": Route(diagnostic),
    }
