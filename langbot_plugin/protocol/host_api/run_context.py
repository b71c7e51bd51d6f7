"""Run-scoped plugin -> host actions: the prompt, history, events, steering and state.

Each needs its flag in the run's ``available_apis`` (see
:mod:`langbot_plugin.protocol.run_needs`); the payload keys are the ones the 4.11.2
host reads. Every payload carries ``run_id``.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, with_config
from typing_extensions import TypedDict

from langbot_plugin.api.entities.builtin.agent_runner.page_results import (
    AgentEventRecord,
    EventPage,
    HistoryPage,
    HistorySearchResult,
)
from langbot_plugin.api.entities.builtin.agent_runner.run_answers import (
    StateDeleteResult,
    StateGetResult,
    StateSetResult,
)
from langbot_plugin.api.entities.builtin.agent_runner.steering import SteeringPullResult
from langbot_plugin.protocol.host_api.common import RunScopedParams, to_host
from langbot_plugin.protocol.spec import Result

__all__ = [
    "EVENT_GET",
    "EVENT_PAGE",
    "GET_PROMPT",
    "HISTORY_PAGE",
    "HISTORY_SEARCH",
    "RUN_CONTEXT_ACTIONS",
    "STATE_DELETE",
    "STATE_GET",
    "STATE_LIST",
    "STATE_SET",
    "STEERING_PULL",
    "Cursor",
    "EventGetParams",
    "EventPageParams",
    "HistoryPageParams",
    "HistorySearchParams",
    "Prompt",
    "StateDeleteResult",
    "StateGetResult",
    "StateKeyParams",
    "StateListParams",
    "StateListResult",
    "StateSetParams",
    "StateSetResult",
    "SteeringPullParams",
]

Cursor = str | int | None


class Prompt(Result):
    """The host's effective prompt for the run: ``[{role, content, ...}, ...]``."""

    prompt: list[dict[str, Any]]


class HistoryPageParams(RunScopedParams):
    conversation_id: str | None = None
    before_cursor: Cursor = None
    after_cursor: Cursor = None
    limit: int = 50
    direction: str = "backward"
    include_attachments: bool = False


class HistorySearchParams(RunScopedParams):
    query: str = ""
    filters: dict[str, Any] = Field(default_factory=dict[str, Any])
    top_k: int = 10


class EventGetParams(RunScopedParams):
    event_id: str


class EventPageParams(RunScopedParams):
    conversation_id: str | None = None
    event_types: list[str] | None = None
    before_cursor: Cursor = None
    after_cursor: Cursor = None
    limit: int = 50


class SteeringPullParams(RunScopedParams):
    mode: str = "all"
    limit: int | None = None


class StateKeyParams(RunScopedParams):
    scope: str
    key: str


class StateSetParams(StateKeyParams):
    value: Any = None


class StateListParams(RunScopedParams):
    scope: str
    prefix: str | None = None
    limit: int = 100


@with_config(ConfigDict(extra="allow"))
class StateListResult(TypedDict, total=False):
    """Keys of a scope (up to the requested limit) and whether more exist."""

    keys: list[str]
    has_more: bool


GET_PROMPT = to_host("get_prompt", RunScopedParams, Prompt, doc="needs prompt_get")
HISTORY_PAGE = to_host("history_page", HistoryPageParams, HistoryPage)
HISTORY_SEARCH = to_host("history_search", HistorySearchParams, HistorySearchResult)
EVENT_GET = to_host("event_get", EventGetParams, AgentEventRecord)
EVENT_PAGE = to_host("event_page", EventPageParams, EventPage)
STEERING_PULL = to_host("steering_pull", SteeringPullParams, SteeringPullResult)
STATE_GET = to_host("state_get", StateKeyParams, StateGetResult, doc="needs state")
STATE_SET = to_host("state_set", StateSetParams, StateSetResult, doc="needs state")
STATE_DELETE = to_host("state_delete", StateKeyParams, StateDeleteResult, doc="needs state")
STATE_LIST = to_host("state_list", StateListParams, StateListResult, doc="needs state")
#: The run-only context API, in the order the docs list it.
RUN_CONTEXT_ACTIONS = (
    GET_PROMPT,
    HISTORY_PAGE,
    HISTORY_SEARCH,
    EVENT_GET,
    EVENT_PAGE,
    STEERING_PULL,
    STATE_GET,
    STATE_SET,
    STATE_DELETE,
    STATE_LIST,
)
