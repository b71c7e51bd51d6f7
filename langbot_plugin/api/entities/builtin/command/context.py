"""What a command handler receives (:class:`ExecuteContext`) and yields
(:class:`CommandReturn`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, BeforeValidator, InstanceOf, PlainSerializer, model_validator

from langbot_plugin.api.entities._legacy import attach_legacy_config
from langbot_plugin.api.entities._query_calls import UnconnectedQueryCalls
from langbot_plugin.api.entities.builtin.command.errors import CommandError
from langbot_plugin.api.entities.builtin.provider.session import Session
from langbot_plugin.api.entities.execution import WorkspaceExecutionScope

__all__ = ["CommandReturn", "ExecuteContext", "typed_command"]


def _to_command_error(value: Any) -> Any:
    if value is None or isinstance(value, CommandError):
        return value
    if isinstance(value, str):
        return CommandError(value)
    if isinstance(value, dict) and isinstance(value.get("message"), str):
        return CommandError(value["message"])
    message = getattr(value, "message", None)
    if isinstance(message, str):
        return CommandError(message)
    raise ValueError("error must be a CommandError, a message string or {'message': ...}")


_WireCommandError = Annotated[
    InstanceOf[CommandError] | None,
    BeforeValidator(_to_command_error),
    PlainSerializer(lambda e: e.message if e is not None else None, return_type=str | None),
]


class CommandReturn(BaseModel):
    """One answer of a command: text, an image, a file, or an error.

    ``error`` is reserved for the system (a failing command should report through
    ``text``); on the wire it is the error's message string and validates back from it.
    """

    text: str | None = None
    image_base64: str | None = None
    image_url: str | None = None
    file_url: str | None = None
    file_name: str | None = None
    error: _WireCommandError = None


class ExecuteContext(UnconnectedQueryCalls, WorkspaceExecutionScope):
    """One command execution.

    For ``!plugin on web``: ``command`` is ``plugin``, ``params`` ``["on", "web"]``;
    while the ``on`` subcommand runs, ``crt_command`` is ``on`` and ``crt_params``
    ``["web"]`` (see :meth:`shift`).
    """

    query_id: int
    query_uuid: str | None = None
    session: Session
    #: The command text without the trigger prefix.
    command_text: str
    full_command_text: str
    command: str
    crt_command: str
    params: list[str]
    crt_params: list[str]
    privilege: int

    unconnected_hint: ClassVar[str] = "command handlers receive an ExecuteContextProxy"

    @model_validator(mode="after")
    def align_session_execution_scope(self) -> ExecuteContext:
        """Share the workspace scope between the context and its session."""
        self.inherit_execution_scope(self.session)
        self.session.inherit_execution_scope(self)
        return self

    def shift(self) -> ExecuteContext:
        """Descend one level: the first current parameter becomes the current command."""
        self.crt_command = self.crt_params[0] if self.crt_params else ""
        self.crt_params = self.crt_params[1:]
        return self

    async def create_new_conversation(self) -> dict[str, Any]:
        """Start a new conversation in this session."""
        raise self._not_connected(self.create_new_conversation)


attach_legacy_config(CommandReturn)


def typed_command(
    command_text: str,
    *,
    session: Mapping[str, Any],
    privilege: int = 1,
    query_id: int = 1,
    query_uuid: str | None = None,
    prefix: str = "!",
) -> dict[str, Any]:
    """The ``execute_command`` context a host sends when a user types
    ``<prefix><command_text>``, built as LangBot 4.11.2 builds it
    (``pkg/command/cmdmgr.py``).

    ``params`` is the text split on single spaces (so two spaces make an empty
    parameter, as on the host), ``command`` and ``crt_command`` its first word,
    ``crt_params`` the words after it. ``privilege`` is 2 for a bot admin, else 1.
    """
    words = command_text.split(" ")
    context: dict[str, Any] = {
        "query_id": query_id,
        "session": dict(session),
        "command_text": command_text,
        "full_command_text": f"{prefix}{command_text}",
        "command": words[0],
        "crt_command": words[0],
        "params": words,
        "crt_params": words[1:],
        "privilege": privilege,
    }
    if query_uuid is not None:
        context["query_uuid"] = query_uuid
    return context
