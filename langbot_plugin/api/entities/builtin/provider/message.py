"""Model-facing messages: what goes into and comes out of an LLM call.

``Message`` is a complete message, ``MessageChunk`` one piece of a streamed answer.
Both dump with every key present (``None`` included), as the host expects, except
``attachments``: files the host resolved for the reply (0.7), kept in process and
never dumped, so neither a model nor the plugin protocol sees them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from langbot_plugin.api.entities.builtin.platform import message as platform_message

__all__ = [
    "ContentElement",
    "FunctionCall",
    "ImageURLContentObject",
    "LLMInvokeResult",
    "LLMStreamEvent",
    "LLMTokenUsage",
    "Message",
    "MessageChunk",
    "ToolCall",
    "ToolCallChunk",
]


class _Lazy(BaseModel):
    """Validators are built on first use: a process that only relays these never pays."""

    model_config = ConfigDict(defer_build=True)


class FunctionCall(_Lazy):
    """The function a tool call invokes; ``arguments`` is a JSON text."""

    name: str
    arguments: str


class ToolCall(_Lazy):
    """A tool call requested by the model.

    ``provider_specific_fields`` carries provider data that must be sent back
    unchanged on the next request (for example a Gemini thought signature).
    """

    id: str
    type: str
    function: FunctionCall
    provider_specific_fields: dict[str, Any] | None = None


class ToolCallChunk(ToolCall):
    """A tool call as it arrives in a streamed answer."""


class ImageURLContentObject(_Lazy):
    """An image reference inside a :class:`ContentElement`."""

    url: str

    def __str__(self) -> str:
        return self.url[:128] + ("..." if len(self.url) > 128 else "")


class ContentElement(_Lazy):
    """One part of a multimodal message; ``type`` says which field holds it."""

    type: str
    text: str | None = None
    image_url: ImageURLContentObject | None = None
    image_base64: str | None = None
    file_url: str | None = None
    file_base64: str | None = None
    file_name: str | None = None

    def __str__(self) -> str:
        if self.type == "text":
            return self.text or ""
        if self.type == "image_url":
            return f"[Image]({self.image_url})"
        if self.type == "image_base64":
            return "[Image](base64)"
        if self.type == "file_url":
            return f"[File]({self.file_url})"
        if self.type == "file_base64":
            return f"[File]({self.file_name})"
        return "Unknown content"

    @classmethod
    def from_text(cls, text: str) -> ContentElement:
        return cls(type="text", text=text)

    @classmethod
    def from_image_url(cls, image_url: str) -> ContentElement:
        return cls(type="image_url", image_url=ImageURLContentObject(url=image_url))

    @classmethod
    def from_image_base64(cls, image_base64: str) -> ContentElement:
        return cls(type="image_base64", image_base64=image_base64)

    @classmethod
    def from_file_url(cls, file_url: str, file_name: str) -> ContentElement:
        return cls(type="file_url", file_url=file_url, file_name=file_name)

    @classmethod
    def from_file_base64(cls, file_base64: str, file_name: str) -> ContentElement:
        return cls(type="file_base64", file_base64=file_base64, file_name=file_name)


def _content_to_chain(
    content: list[ContentElement] | str | None, prefix_text: str
) -> platform_message.MessageChain | None:
    """Render message content as a platform chain; ``prefix_text`` goes before the
    first text (or first, when there is none)."""
    if content is None:
        return None
    if isinstance(content, str):
        return platform_message.MessageChain([platform_message.Plain(text=prefix_text + content)])
    parts: list[platform_message.MessageComponent] = []
    for element in content:
        if element.type == "text" and element.text is not None:
            parts.append(platform_message.Plain(text=element.text))
        elif element.type == "file_url" and element.file_url is not None:
            parts.append(platform_message.File(url=element.file_url, name=element.file_name or ""))
        elif element.type == "image_url":
            if element.image_url is None:
                raise ValueError("image_url content requires image_url payload")
            if element.image_url.url.startswith("http"):
                parts.append(platform_message.Image(url=element.image_url.url))
        elif element.type == "image_base64" and element.image_base64 is not None:
            parts.append(platform_message.Image(base64=element.image_base64))
    if prefix_text:
        for index, part in enumerate(parts):
            if isinstance(part, platform_message.Plain):
                parts[index] = platform_message.Plain(text=prefix_text + part.text)
                break
        else:
            parts.insert(0, platform_message.Plain(text=prefix_text))
    return platform_message.MessageChain(parts)


class _Renderable:
    """Helpers shared by :class:`Message` and :class:`MessageChunk`."""

    if TYPE_CHECKING:
        role: str
        content: list[ContentElement] | str | None
        tool_calls: list[ToolCall] | None
        attachments: platform_message.MessageChain | None

    def readable_str(self) -> str:
        """A one-line human-readable form, for logs."""
        if self.content is not None:
            return f"{self.role}: {self.get_content_platform_message_chain()}"
        if self.tool_calls:
            return f"Call tool: {self.tool_calls[0].id}"
        return "Unknown message"

    def get_content_platform_message_chain(
        self, prefix_text: str = ""
    ) -> platform_message.MessageChain | None:
        """The content as a platform :class:`MessageChain`, followed by the
        ``attachments`` (None when there is neither)."""
        chain = _content_to_chain(self.content, prefix_text)
        if self.attachments is None:
            return chain
        chain = chain if chain is not None else platform_message.MessageChain([])
        chain.extend(self.attachments)
        return chain


class Message(_Lazy, _Renderable):
    """A complete message; ``role`` is user, system, assistant, tool, command or plugin."""

    role: str
    name: str | None = None
    content: list[ContentElement] | str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    resp_message_id: str | None = None
    provider_specific_fields: dict[str, Any] | None = None
    attachments: platform_message.MessageChain | None = Field(default=None, exclude=True)


class MessageChunk(_Lazy, _Renderable):
    """One piece of a streamed answer; ``is_final`` marks the last."""

    resp_message_id: str | None = None
    role: str
    name: str | None = None
    all_content: str | None = None
    content: list[ContentElement] | str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    is_final: bool = False
    msg_sequence: int = 0
    provider_specific_fields: dict[str, Any] | None = None
    attachments: platform_message.MessageChain | None = Field(default=None, exclude=True)


class LLMTokenUsage(BaseModel):
    """Token counts a provider reported; provider-specific extra keys are kept."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None


class LLMInvokeResult(BaseModel):
    """A non-streamed answer and, when known, its usage."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    message: Message
    usage: LLMTokenUsage | None = None


class LLMStreamEvent(BaseModel):
    """One item of a streamed answer: a chunk, a usage report, or both."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    chunk: MessageChunk | None = None
    usage: LLMTokenUsage | None = None
