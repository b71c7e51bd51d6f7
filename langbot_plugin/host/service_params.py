"""Declarations of the run-scoped actions the host serves: names, parameters, results.

One :class:`~langbot_plugin.protocol.spec.ActionSpec` per action, with the payload
keys the 4.11.2 host reads (see ``notes/host-expectations.md`` section 6). Every
payload may carry ``caller_plugin_identity`` (set by the runtime from the plugin's
connection, never trusted from the plugin itself) and must carry ``run_id``.
Answers are plain objects shaped like the 4.11.2 host's, so the result model is the
permissive :class:`~langbot_plugin.protocol.spec.Result`.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from langbot_plugin.protocol.spec import ActionSpec, Params, Result

__all__ = [
    "EVENT_GET",
    "EVENT_PAGE",
    "GET_PROMPT",
    "HISTORY_PAGE",
    "HISTORY_SEARCH",
    "RUN_ACTIONS",
    "RUN_CANCEL",
    "RUN_EVENTS_PAGE",
    "RUN_GET",
    "RUN_LIST",
    "STATE_DELETE",
    "STATE_GET",
    "STATE_LIST",
    "STATE_SET",
    "STEERING_PULL",
    "EventGetParams",
    "EventPageParams",
    "HistoryPageParams",
    "HistorySearchParams",
    "RunCancelParams",
    "RunEventsPageParams",
    "RunListParams",
    "RunParams",
    "RunTargetParams",
    "StateKeyParams",
    "StateListParams",
    "StateSetParams",
    "SteeringPullParams",
]

Cursor = str | int | None


class RunParams(Params):
    """What every run-scoped call carries."""

    run_id: str | None = None
    caller_plugin_identity: str | None = None


class StateKeyParams(RunParams):
    scope: str
    key: str


class StateSetParams(StateKeyParams):
    value: Any = None


class StateListParams(RunParams):
    scope: str
    prefix: str | None = None
    limit: int = 100


class HistoryPageParams(RunParams):
    conversation_id: str | None = None
    before_cursor: Cursor = None
    after_cursor: Cursor = None
    limit: int = 50
    direction: str = "backward"
    include_attachments: bool = False


class HistorySearchParams(RunParams):
    query: str = ""
    filters: dict[str, Any] = Field(default_factory=dict[str, Any])
    top_k: int = 10


class EventGetParams(RunParams):
    event_id: str


class EventPageParams(RunParams):
    conversation_id: str | None = None
    event_types: list[str] | None = None
    before_cursor: Cursor = None
    after_cursor: Cursor = None
    limit: int = 50


class SteeringPullParams(RunParams):
    mode: str = "all"
    limit: int | None = None


class RunTargetParams(RunParams):
    target_run_id: str | None = None


class RunListParams(RunParams):
    conversation_id: str | None = None
    statuses: list[str] | None = None
    before_cursor: Cursor = None
    limit: int = 50


class RunEventsPageParams(RunTargetParams):
    before_cursor: Cursor = None
    after_cursor: Cursor = None
    limit: int = 50
    direction: str = "forward"


class RunCancelParams(RunTargetParams):
    reason: str | None = None
    status_reason: str | None = None


STATE_GET = ActionSpec("state_get", StateKeyParams, Result, doc="{value}")
STATE_SET = ActionSpec("state_set", StateSetParams, Result, doc="{success: true}")
STATE_DELETE = ActionSpec("state_delete", StateKeyParams, Result, doc="{success}")
STATE_LIST = ActionSpec("state_list", StateListParams, Result, doc="{keys, has_more}")
HISTORY_PAGE = ActionSpec(
    "history_page", HistoryPageParams, Result, doc="{items, next_cursor, prev_cursor, has_more}"
)
HISTORY_SEARCH = ActionSpec(
    "history_search", HistorySearchParams, Result, doc="{items, total_count, query}"
)
EVENT_GET = ActionSpec("event_get", EventGetParams, Result, doc="the event record")
EVENT_PAGE = ActionSpec(
    "event_page", EventPageParams, Result, doc="{items, next_cursor, prev_cursor, has_more}"
)
STEERING_PULL = ActionSpec("steering_pull", SteeringPullParams, Result, doc="{items}")
GET_PROMPT = ActionSpec("get_prompt", RunParams, Result, doc="{prompt: [messages]}")
RUN_GET = ActionSpec("run_get", RunTargetParams, Result, doc="the run record")
RUN_LIST = ActionSpec(
    "run_list",
    RunListParams,
    Result,
    doc="{items, next_cursor, prev_cursor, has_more, total_count}",
)
RUN_EVENTS_PAGE = ActionSpec(
    "run_events_page",
    RunEventsPageParams,
    Result,
    doc="{items, next_cursor, prev_cursor, has_more}",
)
RUN_CANCEL = ActionSpec("run_cancel", RunCancelParams, Result, doc="the run record")

#: Every run-only action the service table serves.
RUN_ACTIONS: tuple[ActionSpec[Any, Any], ...] = (
    STATE_GET,
    STATE_SET,
    STATE_DELETE,
    STATE_LIST,
    HISTORY_PAGE,
    HISTORY_SEARCH,
    EVENT_GET,
    EVENT_PAGE,
    STEERING_PULL,
    GET_PROMPT,
    RUN_GET,
    RUN_LIST,
    RUN_EVENTS_PAGE,
    RUN_CANCEL,
)
