"""The query-based actions of a local host: replies, query variables, the bot.

An event handler or a command answers the message that triggered it through these
(``ctx.reply(...)``, ``set_query_var``, ``get_bot_uuid``). :class:`QueryHost` keeps
what they did in memory, so a test or a local session can show it: every reply and
sent message in order, and each query's variables.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langbot_plugin.api.entities.builtin.platform.message import MessageChain
from langbot_plugin.protocol.host_api import messaging
from langbot_plugin.protocol.host_api.common import QueryParams
from langbot_plugin.protocol.spec import ActionTable, Result
from langbot_plugin.rpc import RequestContext

__all__ = ["QueryHost", "SentMessage"]


@dataclass(frozen=True, slots=True)
class SentMessage:
    """A message a plugin replied or sent; ``text`` is its plain text."""

    action: str
    text: str
    message_chain: list[dict[str, Any]]
    query_id: int | None = None
    target: tuple[str, str] | None = None


@dataclass
class QueryHost:
    """Serves ``reply_message``, ``send_message``, ``get_bot_uuid`` and the query
    variables; ``bot_uuid`` is the one bot of this host."""

    bot_uuid: str = "local-bot"
    sent: list[SentMessage] = field(default_factory=list[SentMessage])
    variables: dict[int, dict[str, Any]] = field(default_factory=dict[int, dict[str, Any]])

    def add_to(self, table: ActionTable) -> None:
        table.add(messaging.REPLY_MESSAGE, self._reply)
        table.add(messaging.SEND_MESSAGE, self._send)
        table.add(messaging.GET_BOT_UUID, self._bot_uuid)
        table.add(messaging.SET_QUERY_VAR, self._set_var)
        table.add(messaging.GET_QUERY_VAR, self._get_var)
        table.add(messaging.GET_QUERY_VARS, self._get_vars)

    @property
    def texts(self) -> list[str]:
        """The plain text of every reply and sent message, in order."""
        return [m.text for m in self.sent]

    def _keep(self, action: str, chain: MessageChain, **where: Any) -> None:
        self.sent.append(SentMessage(action, str(chain), chain.model_dump(mode="json"), **where))

    async def _reply(self, p: messaging.ReplyParams, ctx: RequestContext) -> Result:
        self._keep(messaging.REPLY_MESSAGE.name, p.message_chain, query_id=p.query_id)
        return Result()

    async def _send(
        self, p: messaging.SendMessageParams, ctx: RequestContext
    ) -> messaging.SendMessageResult:
        target = (p.target_type, p.target_id)
        self._keep(messaging.SEND_MESSAGE.name, p.message_chain, target=target)
        return messaging.SendMessageResult(result=None)

    async def _bot_uuid(self, p: QueryParams, ctx: RequestContext) -> messaging.BotUuid:
        return messaging.BotUuid(bot_uuid=self.bot_uuid)

    async def _set_var(self, p: messaging.QueryVarSet, ctx: RequestContext) -> Result:
        self.variables.setdefault(p.query_id, {})[p.key] = p.value
        return Result()

    async def _get_var(self, p: messaging.QueryVarKey, ctx: RequestContext) -> messaging.QueryVar:
        return messaging.QueryVar(value=self.variables.get(p.query_id, {}).get(p.key))

    async def _get_vars(self, p: QueryParams, ctx: RequestContext) -> messaging.QueryVars:
        return messaging.QueryVars(vars=dict(self.variables.get(p.query_id, {})))
