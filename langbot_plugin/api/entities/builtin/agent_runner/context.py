"""The context a runner's ``run(ctx)`` receives.

Built by the host for one run and frozen for it: the triggering event, the
conversation and people involved, the input, where output goes, what the run may
use, state, deadline, public variables and the runner's binding config. Unknown keys
a newer host adds are kept (as extra attributes) and dumped back.

While the run is active the context is also bound to the run's API (the 0.7 way of
writing a runner): ``ctx.api``, ``ctx.reply(...)``, ``ctx.state_get(...)``,
``ctx.log(...)`` and the other methods of :class:`~.context_binding.RunContextCalls`.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import AbstractAsyncContextManager, contextmanager
from typing import Any

from pydantic import Field, PrivateAttr

from langbot_plugin.api.entities.builtin.agent_runner.compat import HostContextModel
from langbot_plugin.api.entities.builtin.agent_runner.context_access import ContextAccess
from langbot_plugin.api.entities.builtin.agent_runner.context_binding import (
    ReplyStreamHandle,
    ResultSink,
    RunContextAPI,
    RunContextCalls,
)
from langbot_plugin.api.entities.builtin.agent_runner.delivery import DeliveryContext
from langbot_plugin.api.entities.builtin.agent_runner.event import (
    ActorContext,
    AgentEventContext,
    ConversationContext,
    SubjectContext,
)
from langbot_plugin.api.entities.builtin.agent_runner.input import AgentInput
from langbot_plugin.api.entities.builtin.agent_runner.protocol_v1 import (
    BootstrapContext,
    extra_as,
)
from langbot_plugin.api.entities.builtin.agent_runner.resources import (
    EVENT_REPLY_TOOL,
    AgentResources,
)
from langbot_plugin.api.entities.builtin.agent_runner.result import AgentRunResult
from langbot_plugin.api.entities.builtin.agent_runner.runtime import AgentRuntimeContext
from langbot_plugin.api.entities.builtin.agent_runner.state import AgentRunState
from langbot_plugin.api.entities.builtin.agent_runner.trigger import AgentTrigger
from langbot_plugin.api.entities.builtin.platform.events import EBAEvent, parse_eba_event
from langbot_plugin.api.entities.builtin.platform.message import MessageChain, Plain
from langbot_plugin.rpc.errors import NotReadyError

__all__ = [
    "ActorContext",
    "AdapterContext",
    "AgentEventContext",
    "AgentInput",
    "AgentResources",
    "AgentRunContext",
    "AgentRunState",
    "AgentRuntimeContext",
    "AgentTrigger",
    "ContextAccess",
    "ConversationContext",
    "DeliveryContext",
    "RunContextInactiveError",
    "SubjectContext",
]


class AdapterContext(HostContextModel):
    """Whatever the host's entry adapter wants the runner to see."""

    extra: dict[str, Any] = Field(default_factory=dict)


class AgentRunContext(HostContextModel, RunContextCalls):
    """Everything one run knows; ``run_id`` links results and API calls to it."""

    run_id: str
    trigger: AgentTrigger
    event: AgentEventContext
    conversation: ConversationContext | None = None
    actor: ActorContext | None = None
    subject: SubjectContext | None = None
    input: AgentInput
    delivery: DeliveryContext
    resources: AgentResources
    context: ContextAccess = Field(default_factory=ContextAccess)
    state: AgentRunState = Field(default_factory=AgentRunState)
    runtime: AgentRuntimeContext
    #: Public variables of the invocation (0.7 hosts); host-private state is never here.
    variables: dict[str, Any] = Field(default_factory=dict)
    #: The runner's configuration in this agent binding (its config-schema values).
    config: dict[str, Any] = Field(default_factory=dict)
    adapter: AdapterContext | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    _api: RunContextAPI | None = PrivateAttr(default=None)

    @property
    def bootstrap(self) -> BootstrapContext:
        """Protocol v1: what the host inlined for a ``host_bootstrap`` / ``hybrid``
        runner. Like every key a host may add, it exists only when the host sent it
        (never for self-managed runners nor from the released host, whose SDKs have no
        such attribute): read it with ``getattr(ctx, "bootstrap", None)``."""
        found = extra_as(self, "bootstrap", BootstrapContext)
        if found is None:
            raise AttributeError("bootstrap")  # pydantic then answers as for any extra key
        return found

    _emit: ResultSink | None = PrivateAttr(default=None)

    # ------------------------------------------------------------------ binding

    @contextmanager
    def activate(self, api: RunContextAPI, emit: ResultSink) -> Generator[AgentRunContext]:
        """Bind the context to ``api`` for the run; ``emit`` takes the results the
        context itself produces (``log``). Used by the runner component around
        ``run(ctx)``; a context is active in one run at a time."""
        if self._api is not None:
            raise RuntimeError(
                "Runner context is already active: a context runs in one invocation at a time"
            )
        self._api, self._emit = api, emit
        try:
            yield self
        finally:
            self._api = self._emit = None

    @property
    def active(self) -> bool:
        """Whether the context is bound to a running invocation."""
        return self._api is not None

    @property
    def api(self) -> RunContextAPI:
        """The host API of this run, limited to what the run was granted."""
        if self._api is None:
            raise _inactive("api")
        return self._api

    # ------------------------------------------------------------------ the event

    @property
    def platform_event(self) -> EBAEvent:
        """The triggering event as its typed platform class (``event.data`` parsed);
        :class:`ValueError` when the data is not an event-based platform event."""
        return parse_eba_event(self.event.data)

    async def get_bot_uuid(self) -> str:
        """The bot that received the event; :class:`ValueError` when there is none."""
        bot = self.conversation.bot_id if self.conversation is not None else None
        bot = bot or self.event.data.get("bot_uuid")
        if not bot:
            raise ValueError("this event is not associated with a platform bot")
        return str(bot)

    # ------------------------------------------------------------------ replies and logs

    async def reply(self, message_chain: MessageChain | str, quote_origin: bool = False) -> Any:
        """Reply on the event's own target. Plain text without a quote goes through the
        host's ``event_reply`` tool; anything else is a ``reply_message``."""
        if isinstance(message_chain, str):
            if not quote_origin:
                return await self.api.call_tool(EVENT_REPLY_TOOL, {"text": message_chain})
            message_chain = MessageChain([Plain(text=message_chain)])
        return await self.api.reply_message(message_chain, quote_origin=quote_origin)

    def reply_stream(self) -> AbstractAsyncContextManager[ReplyStreamHandle]:
        """One explicit reply updated with full-text snapshots::

        async with ctx.reply_stream() as reply:
            await reply.update("Working...")
            await reply.update("Working... done")
        """
        return self.api.reply_stream()

    async def log(self, text: str, level: str = "info") -> None:
        """Record a line in the host's log of this run (``debug``, ``info``,
        ``warning``, ``error``); nothing is sent to the platform."""
        if self._emit is None:
            raise _inactive("log")
        await self._emit(AgentRunResult.processor_log(self.run_id, str(text), level))


class RunContextInactiveError(NotReadyError, RuntimeError):
    """A run context's API was used outside its run (``not_ready``; a
    :class:`RuntimeError` too, as the reference raises)."""


def _inactive(name: str) -> RunContextInactiveError:
    return RunContextInactiveError(
        f"Runner context is not active: ctx.{name} is bound to the run's API only while "
        "the runner component runs it"
    )
