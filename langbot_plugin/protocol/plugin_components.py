"""Runtime -> plugin calls into a plugin's files and its page, knowledge-engine and
parser components (the host addresses them through :mod:`.component_calls`).

Files travel beside the answer: the plugin pushes the icon, readme or asset with
``__file_chunk`` and names its key (``files``); for ``parse_document`` the runtime
pushes the document first and names it in ``context.file_key`` (``request_files``).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from langbot_plugin.api.entities.builtin.rag.context import RetrievalContext, RetrievalResponse
from langbot_plugin.api.entities.builtin.rag.models import (
    IngestionContext,
    IngestionResult,
    ParseResult,
)
from langbot_plugin.protocol.pages import PageRequest, PageResponse
from langbot_plugin.protocol.spec import Empty, Params, Result, to_plugin

__all__ = [
    "COMPONENT_CALLS",
    "DELETE_DOCUMENT",
    "GET_PLUGIN_ASSETS_FILE",
    "GET_PLUGIN_ICON",
    "GET_PLUGIN_README",
    "GET_RAG_CAPABILITIES",
    "INGEST_DOCUMENT",
    "ON_KB_CREATE",
    "ON_KB_DELETE",
    "PAGE_API",
    "PARSE_DOCUMENT",
    "PLUGIN_DIAGNOSTIC",
    "RETRIEVE_KNOWLEDGE",
    "AssetFile",
    "AssetRef",
    "Capabilities",
    "DocumentRef",
    "EngineRef",
    "IngestParams",
    "KnowledgeBaseConfig",
    "KnowledgeBaseRef",
    "PageApiParams",
    "PageRequest",
    "PageResponse",
    "ParseParams",
    "ParseRequest",
    "PluginIcon",
    "PluginReadme",
    "ReadmeRef",
    "RetrieveParams",
    "Success",
]


class PluginIcon(Result):
    plugin_icon_file_key: str
    mime_type: str


class ReadmeRef(Params):
    language: str | None = None


class PluginReadme(Result):
    plugin_readme_file_key: str
    mime_type: str


class AssetRef(Params):
    """A path under the plugin's ``assets/`` or ``components/pages/``."""

    file_key: str = ""


class AssetFile(Result):
    file_file_key: str | None = None
    mime_type: str | None = None


class PageApiParams(Params):
    page_id: str = ""
    endpoint: str = ""
    method: str = "POST"
    body: Any = None
    caller: dict[str, Any] | None = None


class EngineRef(Params):
    """Names one of the plugin's knowledge engines (empty: its first)."""

    engine_name: str | None = None


class RetrieveParams(Params):
    retriever_name: str | None = None
    retrieval_context: RetrievalContext


class IngestParams(EngineRef):
    context: IngestionContext


class KnowledgeBaseRef(EngineRef):
    kb_id: str


class DocumentRef(KnowledgeBaseRef):
    document_id: str


class KnowledgeBaseConfig(KnowledgeBaseRef):
    config: dict[str, Any] = Field(default_factory=dict[str, Any])


class Success(Result):
    success: bool


class Capabilities(Result):
    capabilities: list[str]


class ParseRequest(Params):
    """``file_key`` names the document the runtime pushed before the call."""

    file_key: str
    mime_type: str = "application/octet-stream"
    filename: str = "document"
    metadata: dict[str, Any] = Field(default_factory=dict[str, Any])


class ParseParams(Params):
    parser_name: str | None = None
    context: ParseRequest


GET_PLUGIN_ICON = to_plugin(
    "get_plugin_icon", Empty, PluginIcon, 15, files=("plugin_icon_file_key",)
)
GET_PLUGIN_README = to_plugin(
    "get_plugin_readme", ReadmeRef, PluginReadme, 20, files=("plugin_readme_file_key",)
)
GET_PLUGIN_ASSETS_FILE = to_plugin(
    "get_plugin_assets_file", AssetRef, AssetFile, 20, files=("file_file_key",)
)
PAGE_API = to_plugin("page_api", PageApiParams, PageResponse, 30)
RETRIEVE_KNOWLEDGE = to_plugin("retrieve_knowledge", RetrieveParams, RetrievalResponse, 180)
INGEST_DOCUMENT = to_plugin("ingest_document", IngestParams, IngestionResult, 1200)
DELETE_DOCUMENT = to_plugin("delete_document", DocumentRef, Success, 30)
ON_KB_CREATE = to_plugin("on_kb_create", KnowledgeBaseConfig, Success, 30)
ON_KB_DELETE = to_plugin("on_kb_delete", KnowledgeBaseRef, Success, 30)
GET_RAG_CAPABILITIES = to_plugin("get_rag_capabilities", EngineRef, Capabilities, 30)
PARSE_DOCUMENT = to_plugin(
    "parse_document", ParseParams, ParseResult, 300, request_files=("context.file_key",)
)
PLUGIN_DIAGNOSTIC = to_plugin(
    "plugin_diagnostic",
    Params,
    Result,
    5,
    doc="the host reports a problem with the plugin ({code, message, plugin})",
)

#: Every component call a worker serves.
COMPONENT_CALLS = (
    GET_PLUGIN_ICON,
    GET_PLUGIN_README,
    GET_PLUGIN_ASSETS_FILE,
    PAGE_API,
    RETRIEVE_KNOWLEDGE,
    INGEST_DOCUMENT,
    DELETE_DOCUMENT,
    ON_KB_CREATE,
    ON_KB_DELETE,
    GET_RAG_CAPABILITIES,
    PARSE_DOCUMENT,
    PLUGIN_DIAGNOSTIC,
)
