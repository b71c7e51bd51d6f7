"""What a run-scoped call needs from its run's grants, declared once per action.

Enforced twice: the runtime refuses a call before forwarding it
(:mod:`langbot_plugin.runtime.runs`), and the host refuses it again before serving it
(:mod:`langbot_plugin.host.gate`, :mod:`langbot_plugin.host.services`). A call needs a
granted resource (:class:`ResourceNeed`), a flag of the run's ``available_apis``
(:class:`ApiNeed`), or a storage area (:class:`StorageNeed`). :data:`RUN_ONLY` names
the actions that exist only for runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from langbot_plugin.protocol.host_api import (
    artifacts,
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
    "AVAILABLE_APIS",
    "NEEDS",
    "RUN_ONLY",
    "STORAGE_AREAS",
    "ApiNeed",
    "Need",
    "ResourceNeed",
    "StorageNeed",
    "api_flag",
    "named_resource",
]

#: The flags of a run's ``available_apis`` as the 4.11.2 host sends them.
AVAILABLE_APIS = (
    "box",
    "prompt_get",
    "history_page",
    "history_search",
    "event_get",
    "event_page",
    "state",
    "storage",
    "steering_pull",
    "run_get",
    "run_list",
    "run_events_page",
    "run_cancel",
    "run_append_result",
    "run_finalize",
    "run_claim",
    "run_renew_claim",
    "run_release_claim",
    "runtime_register",
    "runtime_heartbeat",
    "runtime_list",
    "reply_stream",
)


@dataclass(frozen=True, slots=True)
class ResourceNeed:
    """The resource named by ``field`` of the payload must be granted for ``operation``
    (``optional``: only when the payload names one)."""

    kind: Literal["model", "tool", "knowledge_base"]
    field: str
    operation: str
    optional: bool = False

    def applies(self, data: dict[str, Any]) -> bool:
        """Whether a payload must pass this need (an optional one it does not name passes)."""
        return not self.optional or data.get(self.field) is not None


@dataclass(frozen=True, slots=True)
class ApiNeed:
    """The run's ``available_apis`` must include ``api``."""

    api: str


#: The storage areas a run may be granted (``ctx.resources.storage.<area>_storage``);
#: ``binding`` is Protocol v1's, which only our host library grants.
STORAGE_AREAS: tuple[Literal["plugin", "workspace", "binding"], ...] = (
    "plugin",
    "workspace",
    "binding",
)


@dataclass(frozen=True, slots=True)
class StorageNeed:
    """The run must be granted the ``area`` storage."""

    area: Literal["plugin", "workspace", "binding"]


Need = ResourceNeed | ApiNeed | StorageNeed


def _needs() -> dict[str, Need]:
    rc, ledger = run_context, run_ledger
    needs: dict[ActionSpec[Any, Any], Need] = {
        models.INVOKE_LLM: ResourceNeed("model", "llm_model_uuid", "invoke"),
        models.INVOKE_LLM_STREAM: ResourceNeed("model", "llm_model_uuid", "stream"),
        models.COUNT_TOKENS: ResourceNeed("model", "llm_model_uuid", "count_tokens"),
        models.INVOKE_RERANK: ResourceNeed("model", "rerank_model_uuid", "rerank"),
        models.INVOKE_EMBEDDING: ResourceNeed("model", "embedding_model_uuid", "invoke"),
        models.CALL_TOOL: ResourceNeed("tool", "tool_name", "call"),
        models.GET_TOOL_DETAIL: ResourceNeed("tool", "tool_name", "detail"),
        knowledge.RETRIEVE_KNOWLEDGE: ResourceNeed("knowledge_base", "kb_id", "retrieve"),
        knowledge.RETRIEVE_KNOWLEDGE_BASE: ResourceNeed("knowledge_base", "kb_id", "retrieve"),
        messaging.REPLY_STREAM: ApiNeed("reply_stream"),
        # a reply on the run's own event (``reply``, ``reply_files``) uses its context tool
        messaging.CALL_PLATFORM_API: ResourceNeed("tool", "context_tool", "call", optional=True),
        **dict.fromkeys(box.BOX_ACTIONS, ApiNeed("box")),
        rc.GET_PROMPT: ApiNeed("prompt_get"),
        rc.HISTORY_PAGE: ApiNeed("history_page"),
        rc.HISTORY_SEARCH: ApiNeed("history_search"),
        rc.EVENT_GET: ApiNeed("event_get"),
        rc.EVENT_PAGE: ApiNeed("event_page"),
        rc.STEERING_PULL: ApiNeed("steering_pull"),
        artifacts.ARTIFACT_METADATA: ApiNeed("artifact_metadata"),
        artifacts.ARTIFACT_READ: ApiNeed("artifact_read"),
        artifacts.ARTIFACT_MOUNT: ApiNeed("artifact_read"),
        artifacts.ARTIFACT_UPLOAD_BEGIN: ApiNeed("artifact_upload"),
        artifacts.ARTIFACT_UPLOAD_APPEND: ApiNeed("artifact_upload"),
        **dict.fromkeys(
            (rc.STATE_GET, rc.STATE_SET, rc.STATE_DELETE, rc.STATE_LIST), ApiNeed("state")
        ),
        # the ledger's actions behind a flag of their own name, with the admin run API's
        # a run may make too, when its flag is on
        **{
            spec: ApiNeed(spec.name)
            for spec in (
                *ledger.RUN_ACTIONS,
                ledger.RUN_CLAIM,
                ledger.RUN_RENEW_CLAIM,
                ledger.RUN_RELEASE_CLAIM,
                ledger.RUNTIME_REGISTER,
                ledger.RUNTIME_HEARTBEAT,
                ledger.RUNTIME_LIST,
            )
        },
    }
    for area in (storage.PLUGIN_STORAGE, storage.WORKSPACE_STORAGE, storage.BINDING_STORAGE):
        for spec in area.actions:
            needs[spec] = StorageNeed(area.area)
    return {spec.name: need for spec, need in needs.items()}


#: What each run-scoped action (by the name the plugin sends) needs from the run.
NEEDS: dict[str, Need] = _needs()


#: Actions that exist only for runs (state, history, events, steering, the prompt):
#: without a live run of the calling plugin they are refused ``run_not_live``. Every
#: other action is also a plugin-level action, which any plugin may call without a run
#: (what the 4.11.2 host allows a plugin), and which a run's grants narrow; the run
#: ledger's actions without a run are admin calls, which the host serves to the
#: plugins its configuration names as admins (and refuses for every other).
RUN_ONLY: frozenset[str] = frozenset(
    spec.name
    for spec in (
        *run_context.RUN_CONTEXT_ACTIONS,
        *artifacts.ARTIFACT_ACTIONS,
        *storage.BINDING_STORAGE_ACTIONS,
    )
)


def api_flag(spec: ActionSpec[Any, Any]) -> str:
    """The ``available_apis`` flag a run-scoped context API needs."""
    need = NEEDS[spec.name]
    if not isinstance(need, ApiNeed):
        raise TypeError(f"{spec.name} needs no context API flag")
    return need.api


def named_resource(action: str, data: dict[str, Any]) -> object:
    """The resource a run-scoped call names, as its audit entry shows it (a model or
    tool id, ``scope:key`` for state, the storage area); ``None`` if it names none."""
    need = NEEDS.get(action)
    if isinstance(need, ApiNeed):
        scope, key = data.get("scope"), data.get("key")
        return f"{scope}:{key}" if isinstance(scope, str) and key is not None else None
    if isinstance(need, StorageNeed):
        return need.area
    return None if need is None else data.get(need.field)
