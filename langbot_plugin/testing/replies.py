"""What the harness's calls return: :class:`AgentReply` and :class:`EmittedEvent`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langbot_plugin.api.entities.context import EventContext
from langbot_plugin.host.deliveries import Delivery
from langbot_plugin.host.query_api import SentMessage
from langbot_plugin.host.results import NormalizedResult
from langbot_plugin.host.run_host import RunOutcome

__all__ = ["AgentReply", "EmittedEvent"]


@dataclass
class AgentReply:
    """One driven run: the answer as LangBot shows it, and everything the runner sent.

    ``results`` are the accepted results as the host recorded them (sequence assigned,
    payload validated); ``items`` are the stream's items as they arrived.
    """

    outcome: RunOutcome
    items: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])

    @property
    def text(self) -> str:
        """The final answer's text."""
        return self.outcome.text

    @property
    def status(self) -> str:
        """``completed``, ``failed``, ``cancelled`` or ``timeout``."""
        return self.outcome.status

    @property
    def ok(self) -> bool:
        return self.outcome.status == "completed"

    @property
    def error(self) -> dict[str, Any] | None:
        """The ``run.failed`` payload (``error``, ``code``...) of a failed run."""
        return self.outcome.error

    @property
    def traceback(self) -> str | None:
        """Where the runner's own code raised (its frames only), for a run that failed
        because the runner raised (``runner.exception``, or the code of an API error it
        let through)."""
        details = (self.outcome.error or {}).get("details") or {}
        return str(details["traceback"]) if details.get("traceback") else None

    @property
    def usage(self) -> dict[str, Any] | None:
        return self.outcome.usage

    @property
    def run_id(self) -> str:
        return self.outcome.run_id

    @property
    def results(self) -> list[NormalizedResult]:
        return self.outcome.results

    @property
    def messages(self) -> list[str]:
        """The texts of the messages delivered to the chat, in order."""
        return self.outcome.messages

    @property
    def deliveries(self) -> list[Delivery]:
        """The exported Box files the run sent (``reply_files`` or ``message.completed``
        ``file_ids``), each with its exact bytes, in order."""
        return self.outcome.deliveries

    @property
    def types(self) -> list[str]:
        """The result types in order (``message.delta``, ``tool.call.started``...)."""
        return [r.type for r in self.outcome.results]

    def of_type(self, kind: str) -> list[NormalizedResult]:
        return [r for r in self.outcome.results if r.type == kind]


@dataclass
class EmittedEvent:
    """An event after the plugin's listeners saw it."""

    #: Whether a listener of the plugin handled the event.
    emitted: bool
    #: The context as the listeners left it (``is_prevented_default()``, changed fields).
    context: EventContext
    #: What the listeners replied or sent while handling it.
    replies: list[SentMessage] = field(default_factory=list[SentMessage])

    @property
    def reply_texts(self) -> list[str]:
        return [r.text for r in self.replies]
