"""The input of a run: the user's text, content parts, attachments, or the
submission of an interaction."""

from __future__ import annotations

from pydantic import Field

from langbot_plugin.api.entities.builtin.agent_runner.compat import HostContextModel
from langbot_plugin.api.entities.builtin.agent_runner.interaction import InteractionSubmission
from langbot_plugin.api.entities.builtin.provider.message import ContentElement

__all__ = ["AgentInput", "InputAttachment"]


class InputAttachment(HostContextModel):
    """Metadata of an attachment of the current event (files are read through
    authorized tools, not carried here, except small ``content``). Keys a newer host
    adds are kept as extra attributes."""

    #: Host-issued handle for importing this input into the run's Box (0.7 hosts).
    ref: str | None = None
    type: str | None = None
    mime_type: str | None = None
    size: int | None = None
    name: str | None = None
    #: ``url``, ``base64``, ``message-chain``, ...
    source: str | None = None
    url: str | None = None
    #: Where the host staged the file in the sandbox/workspace.
    path: str | None = None
    #: Base64 or data URL, for small attachments.
    content: str | None = None
    id: str | None = None


class AgentInput(HostContextModel):
    """What the user sent."""

    text: str | None = None
    contents: list[ContentElement] = Field(default_factory=list)
    attachments: list[InputAttachment] = Field(default_factory=list)
    interaction: InteractionSubmission | None = None

    def to_text(self) -> str:
        """``text`` if set, else the text parts of ``contents`` joined by spaces."""
        if self.text is not None:
            return self.text
        return " ".join(c.text for c in self.contents if c.type == "text" and c.text)
