"""The plugin -> host API: every action a plugin sends to LangBot through the runtime.

One module per area: :mod:`.messaging` (bots, messages, queries, the host), :mod:`.models`
(LLMs, embeddings, rerank, tools), :mod:`.knowledge`, :mod:`.storage`,
:mod:`.run_context` and :mod:`.run_ledger` (run-scoped), :mod:`.box`. :data:`HOST_API`
lists every spec the runtime forwards; :data:`RUNTIME_ANSWERS` the three it answers
itself.
"""

from __future__ import annotations

from typing import Any

from langbot_plugin.protocol.host_api import (
    box,
    knowledge,
    messaging,
    models,
    run_context,
    run_ledger,
    storage,
)
from langbot_plugin.protocol.spec import ActionSpec

__all__ = [
    "HOST_API",
    "RUNTIME_ANSWERS",
    "box",
    "knowledge",
    "messaging",
    "models",
    "run_context",
    "run_ledger",
    "storage",
]

#: Every plugin -> host action, in the order the docs list them.
HOST_API: tuple[ActionSpec[Any, Any], ...] = (
    messaging.REPLY_MESSAGE,
    messaging.GET_BOT_UUID,
    messaging.SET_QUERY_VAR,
    messaging.GET_QUERY_VAR,
    messaging.GET_QUERY_VARS,
    messaging.CREATE_NEW_CONVERSATION,
    messaging.GET_LANGBOT_VERSION,
    messaging.GET_BOTS,
    messaging.GET_BOT_INFO,
    messaging.SEND_MESSAGE,
    messaging.CALL_PLATFORM_API,
    messaging.REPLY_STREAM,
    models.GET_LLM_MODELS,
    models.INVOKE_LLM,
    models.INVOKE_LLM_STREAM,
    models.COUNT_TOKENS,
    models.INVOKE_EMBEDDING,
    models.INVOKE_RERANK,
    models.CALL_TOOL,
    models.GET_TOOL_DETAIL,
    knowledge.VECTOR_UPSERT,
    knowledge.VECTOR_SEARCH,
    knowledge.VECTOR_DELETE,
    knowledge.VECTOR_LIST,
    knowledge.GET_KNOWLEDGE_FILE_STREAM,
    knowledge.LIST_KNOWLEDGE_BASES,
    knowledge.LIST_PIPELINE_KNOWLEDGE_BASES,
    knowledge.RETRIEVE_KNOWLEDGE,
    knowledge.RETRIEVE_KNOWLEDGE_BASE,
    knowledge.LIST_PARSERS,
    knowledge.INVOKE_PARSER,
    *(
        spec
        for area in (storage.PLUGIN_STORAGE, storage.WORKSPACE_STORAGE)
        for spec in (area.set, area.get, area.keys, area.delete)
    ),
    storage.GET_CONFIG_FILE,
    run_context.GET_PROMPT,
    run_context.HISTORY_PAGE,
    run_context.HISTORY_SEARCH,
    run_context.EVENT_GET,
    run_context.EVENT_PAGE,
    run_context.STEERING_PULL,
    run_context.STATE_GET,
    run_context.STATE_SET,
    run_context.STATE_DELETE,
    run_context.STATE_LIST,
    run_ledger.RUN_GET,
    run_ledger.RUN_LIST,
    run_ledger.RUN_EVENTS_PAGE,
    run_ledger.RUN_CANCEL,
    run_ledger.RUN_APPEND_RESULT,
    run_ledger.RUN_FINALIZE,
    *run_ledger.ADMIN_ACTIONS,
    *box.BOX_ACTIONS,
)

#: Plugin calls the runtime answers itself, from the plugins of the caller's workspace.
RUNTIME_ANSWERS: tuple[ActionSpec[Any, Any], ...] = (
    messaging.LIST_PLUGINS_MANIFEST,
    messaging.LIST_COMMANDS,
    messaging.LIST_TOOLS,
)
