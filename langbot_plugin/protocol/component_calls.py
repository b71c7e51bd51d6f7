"""Host -> runtime -> plugin calls that target one plugin's components, and the
component listings the runtime answers from the plugins' manifests.

Each row of :data:`TARGETED` pairs the host's action with the plugin's
(:mod:`.plugin_components`), says how the host's payload maps onto the plugin's, and
under which keys the host reads a file the plugin returned. The runtime serves every
row with one routine (:mod:`langbot_plugin.runtime.targeted`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from pydantic import Field

from langbot_plugin.protocol import plugin_components as comp
from langbot_plugin.protocol.spec import ActionSpec, Direction, Params, Result, from_host

__all__ = [
    "GET_PLUGIN_ASSETS_FILE",
    "GET_PLUGIN_ICON",
    "GET_PLUGIN_README",
    "GET_RAG_CREATION_SETTINGS_SCHEMA",
    "GET_RAG_RETRIEVAL_SETTINGS_SCHEMA",
    "GET_STORAGE_ANALYSIS",
    "LISTINGS",
    "LIST_KNOWLEDGE_ENGINES",
    "LIST_PARSERS",
    "PAGE_API",
    "PARSE_DOCUMENT",
    "PLUGIN_DIAGNOSTIC",
    "RAG_DELETE_DOCUMENT",
    "RAG_INGEST_DOCUMENT",
    "RAG_ON_KB_CREATE",
    "RAG_ON_KB_DELETE",
    "RETRIEVE_KNOWLEDGE",
    "TARGETED",
    "EngineSchemaRef",
    "Engines",
    "HostAssetRef",
    "HostReadme",
    "ParserEntries",
    "PluginTarget",
    "RagSchema",
    "StorageAnalysis",
    "StorageDirectory",
    "Targeted",
    "relayed",
]

Payload = dict[str, Any]
_RELAYED = Direction.HOST_TO_PLUGIN


class PluginTarget(Params):
    """Names the plugin a call is for (the host uses both spellings of the author)."""

    plugin_author: str | None = None
    author: str | None = None
    plugin_name: str = ""

    @property
    def plugin_identity(self) -> str:
        return f"{self.plugin_author or self.author}/{self.plugin_name}"


class HostReadme(Result):
    """The host reads the readme under either key."""

    readme_file_key: str | None = None
    plugin_readme_file_key: str | None = None
    mime_type: str = ""


class HostAssetRef(PluginTarget):
    """The host names the asset ``file_path`` (``file_key`` in older hosts)."""

    file_path: str | None = None
    file_key: str | None = None


class RagSchema(Result):
    schema_: list[Any] = Field(default_factory=list[Any], alias="schema")


class EngineSchemaRef(PluginTarget):
    engine_name: str | None = None


class Engines(Result):
    engines: list[dict[str, Any]]


class ParserEntries(Result):
    parsers: list[dict[str, Any]]


class StorageDirectory(Result):
    name: str
    path: str
    size_bytes: int


class StorageAnalysis(Result):
    size_bytes: int
    directories: list[StorageDirectory]


def _host_params(params: type[Params]) -> type[Params]:
    """``params`` plus the fields naming the target plugin."""
    return cast(
        type[Params],
        type(f"Host{params.__name__}", (PluginTarget, params), {"__module__": __name__}),
    )


def relayed(
    plugin: ActionSpec[Any, Any],
    *,
    name: str | None = None,
    params: type[Params] | None = None,
    result: type[Any] | None = None,
    files: tuple[str, ...] | None = None,
) -> ActionSpec[Any, Any]:
    """The host's side of a component call: the plugin action's own declaration, with
    the target plugin's name added to the parameters (and what differs given)."""
    return ActionSpec(
        name or plugin.name,
        params or _host_params(plugin.params),
        result or plugin.result,
        direction=_RELAYED,
        timeout=plugin.timeout,
        files=plugin.files if files is None else files,
        request_files=plugin.request_files,
        doc=plugin.doc,
    )


GET_PLUGIN_ICON = relayed(comp.GET_PLUGIN_ICON)
GET_PLUGIN_README = relayed(
    comp.GET_PLUGIN_README,
    result=HostReadme,
    files=("readme_file_key", "plugin_readme_file_key"),
)
GET_PLUGIN_ASSETS_FILE = relayed(comp.GET_PLUGIN_ASSETS_FILE, params=HostAssetRef)
PAGE_API = relayed(comp.PAGE_API)
RETRIEVE_KNOWLEDGE = relayed(comp.RETRIEVE_KNOWLEDGE)
RAG_INGEST_DOCUMENT = relayed(comp.INGEST_DOCUMENT, name="rag_ingest_document")
RAG_DELETE_DOCUMENT = relayed(comp.DELETE_DOCUMENT, name="rag_delete_document")
RAG_ON_KB_CREATE = relayed(comp.ON_KB_CREATE, name="rag_on_kb_create")
RAG_ON_KB_DELETE = relayed(comp.ON_KB_DELETE, name="rag_on_kb_delete")
PARSE_DOCUMENT = relayed(comp.PARSE_DOCUMENT)

LIST_KNOWLEDGE_ENGINES = from_host(
    "list_knowledge_engines", Params, Engines, doc="from the manifests"
)
LIST_PARSERS = from_host("list_parsers", Params, ParserEntries, doc="from the manifests")
GET_RAG_CREATION_SETTINGS_SCHEMA = from_host(
    "get_rag_creation_settings_schema", EngineSchemaRef, RagSchema
)
GET_RAG_RETRIEVAL_SETTINGS_SCHEMA = from_host(
    "get_rag_retrieval_settings_schema", EngineSchemaRef, RagSchema
)
PLUGIN_DIAGNOSTIC = from_host(
    "plugin_diagnostic",
    Params,
    Result,
    doc="the host reports a problem ({code, message, plugin}); passed on to that plugin",
)
GET_STORAGE_ANALYSIS = from_host(
    "get_storage_analysis",
    Params,
    StorageAnalysis,
    doc="bytes used by the runtime's artifacts, environments and installations",
)

#: The listings and reports the runtime answers itself.
LISTINGS = (
    LIST_KNOWLEDGE_ENGINES,
    LIST_PARSERS,
    GET_RAG_CREATION_SETTINGS_SCHEMA,
    GET_RAG_RETRIEVAL_SETTINGS_SCHEMA,
    PLUGIN_DIAGNOSTIC,
    GET_STORAGE_ANALYSIS,
)


@dataclass(frozen=True, slots=True)
class Targeted:
    """One host action addressed to a plugin, and the plugin action it becomes.

    ``host`` is usually :func:`relayed` from ``plugin``. ``payload`` maps the host's
    payload onto the plugin's (default: the plugin action's own fields, as they came).
    A file the plugin returns under the first key of ``plugin.files`` is pushed to the
    host and named under every key of ``host.files``; a file the host sent under
    ``plugin.request_files`` is pushed to the plugin first.
    """

    host: ActionSpec[Any, Any]
    plugin: ActionSpec[Any, Any]
    payload: Callable[[Payload], Payload] | None = None

    def plugin_payload(self, data: Payload) -> Payload:
        if self.payload is not None:
            return self.payload(data)
        fields = self.plugin.params.model_fields
        return {k: v for k, v in data.items() if k in fields}


#: Every component call the host can make, and the plugin action each becomes. Adding
#: one: declare the plugin's action (``plugin_components``) and add its row here.
TARGETED: dict[str, Targeted] = {
    row.host.name: row
    for row in [
        Targeted(GET_PLUGIN_ICON, comp.GET_PLUGIN_ICON),
        Targeted(GET_PLUGIN_README, comp.GET_PLUGIN_README),
        Targeted(
            GET_PLUGIN_ASSETS_FILE,
            comp.GET_PLUGIN_ASSETS_FILE,
            lambda d: {"file_key": d.get("file_path", d.get("file_key", ""))},
        ),
        Targeted(PAGE_API, comp.PAGE_API),
        Targeted(RETRIEVE_KNOWLEDGE, comp.RETRIEVE_KNOWLEDGE),
        Targeted(RAG_INGEST_DOCUMENT, comp.INGEST_DOCUMENT),
        Targeted(RAG_DELETE_DOCUMENT, comp.DELETE_DOCUMENT),
        Targeted(RAG_ON_KB_CREATE, comp.ON_KB_CREATE),
        Targeted(RAG_ON_KB_DELETE, comp.ON_KB_DELETE),
        Targeted(PARSE_DOCUMENT, comp.PARSE_DOCUMENT),
    ]
}
