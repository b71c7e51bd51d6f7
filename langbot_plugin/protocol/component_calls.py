"""Host -> runtime -> plugin calls that target one plugin's components.

Each row of :data:`TARGETED` names the host action, the plugin action it becomes, how
the host's payload maps onto the plugin's, and which result keys carry files. The
runtime serves every row with one routine (:mod:`langbot_plugin.runtime.targeted`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["TARGETED", "Targeted"]

Payload = dict[str, Any]


def _keep(*keys: str) -> Callable[[Payload], Payload]:
    def pick(data: Payload) -> Payload:
        return {k: data[k] for k in keys if k in data}

    return pick


@dataclass(frozen=True, slots=True)
class Targeted:
    """One host action addressed to a plugin (named by ``plugin_author``/``plugin_name``)."""

    host_action: str
    plugin_action: str
    payload: Callable[[Payload], Payload]
    timeout: float = 30.0
    #: result key holding a file the plugin sent, and the key(s) the host reads it under
    file_result: tuple[str, tuple[str, ...]] | None = None
    #: request key (inside ``context``) holding a file the host sent for the plugin
    file_request: str | None = None


TARGETED: dict[str, Targeted] = {
    row.host_action: row
    for row in [
        Targeted(
            "get_plugin_icon",
            "get_plugin_icon",
            _keep(),
            15,
            file_result=("plugin_icon_file_key", ("plugin_icon_file_key",)),
        ),
        Targeted(
            "get_plugin_readme",
            "get_plugin_readme",
            _keep("language"),
            20,
            file_result=("plugin_readme_file_key", ("readme_file_key", "plugin_readme_file_key")),
        ),
        Targeted(
            "get_plugin_assets_file",
            "get_plugin_assets_file",
            lambda d: {"file_key": d.get("file_path", d.get("file_key", ""))},
            20,
            file_result=("file_file_key", ("file_file_key",)),
        ),
        Targeted(
            "page_api", "page_api", _keep("page_id", "endpoint", "method", "body", "caller"), 30
        ),
        Targeted(
            "retrieve_knowledge",
            "retrieve_knowledge",
            _keep("retriever_name", "retrieval_context"),
            180,
        ),
        Targeted("rag_ingest_document", "ingest_document", _keep("context", "engine_name"), 1200),
        Targeted(
            "rag_delete_document",
            "delete_document",
            _keep("kb_id", "document_id", "engine_name"),
            30,
        ),
        Targeted("rag_on_kb_create", "on_kb_create", _keep("kb_id", "config", "engine_name"), 30),
        Targeted("rag_on_kb_delete", "on_kb_delete", _keep("kb_id", "engine_name"), 30),
        Targeted(
            "parse_document",
            "parse_document",
            _keep("context", "parser_name"),
            300,
            file_request="file_key",
        ),
    ]
}
