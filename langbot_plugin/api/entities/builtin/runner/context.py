"""0.7 path for the context a runner's ``run(ctx)`` receives (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``context`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner.box import BoxBinding, BoxFile
from langbot_plugin.api.entities.builtin.agent_runner.context import (
    ActorContext,
    AdapterContext,
    AgentEventContext,
    AgentInput,
    AgentResources,
    AgentRunContext,
    AgentRunState,
    AgentRuntimeContext,
    AgentTrigger,
    ContextAccess,
    ConversationContext,
    DeliveryContext,
    SubjectContext,
)
from langbot_plugin.api.entities.builtin.agent_runner.page_results import (
    AgentEventRecord,
    EventPage,
    HistoryPage,
    HistorySearchResult,
)
from langbot_plugin.api.entities.builtin.agent_runner.run_ledger import (
    AgentRun,
    AgentRunEvent,
    RunEventPage,
    RunPage,
)
from langbot_plugin.api.entities.builtin.agent_runner.steering import SteeringPullResult
from langbot_plugin.api.entities.builtin.platform.message import MessageChain, Plain
from langbot_plugin.api.entities.builtin.runner.result import RunnerResult

RunnerContext = AgentRunContext

__all__ = [
    "ActorContext",
    "AdapterContext",
    "AgentEventContext",
    "AgentEventRecord",
    "AgentInput",
    "AgentResources",
    "AgentRun",
    "AgentRunContext",
    "AgentRunEvent",
    "AgentRunState",
    "AgentRuntimeContext",
    "AgentTrigger",
    "BoxBinding",
    "BoxFile",
    "ContextAccess",
    "ConversationContext",
    "DeliveryContext",
    "EventPage",
    "HistoryPage",
    "HistorySearchResult",
    "MessageChain",
    "Plain",
    "RunEventPage",
    "RunPage",
    "RunnerContext",
    "RunnerResult",
    "SteeringPullResult",
    "SubjectContext",
]
