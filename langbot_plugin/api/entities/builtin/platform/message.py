"""Platform message chains and their components.

A :class:`MessageChain` is a list of components. On the wire it is a JSON list whose
items carry a ``type`` string naming the component (``"Plain"``, ``"Image"``, ...).
Validation turns every item into the matching component class, wherever the chain
sits (a field of an event, a nested ``Quote.origin``, a forward node), and never
modifies the input. Items of an unknown ``type`` become :class:`Unknown`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    RootModel,
    SerializationInfo,
    SerializeAsAny,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

from langbot_plugin.api.entities.builtin.platform import _wechat
from langbot_plugin.api.entities.builtin.platform._base import MessageComponent
from langbot_plugin.api.entities.builtin.platform._media import (
    MAX_IMAGE_BYTES,
    Face,
    File,
    Image,
    Voice,
)
from langbot_plugin.api.entities.builtin.platform._wechat import *  # noqa: F403

__all__ = [
    "COMPONENT_TYPES",
    "MAX_IMAGE_BYTES",
    "At",
    "AtAll",
    "Face",
    "File",
    "Forward",
    "ForwardMessageDiaplay",
    "ForwardMessageDisplay",
    "ForwardMessageNode",
    "Image",
    "MessageChain",
    "MessageComponent",
    "Plain",
    "Quote",
    "Source",
    "Unknown",
    "Voice",
]
__all__ += _wechat.__all__


def _to_component(item: Any) -> Any:
    """One wire item as a component instance (never mutating ``item``).

    Received data is handled leniently: an unknown ``type`` or a known component
    whose fields do not validate becomes an :class:`Unknown` saying so, rather than
    making the whole chain (and the event around it) unreadable.
    """
    if isinstance(item, MessageComponent):
        return item
    if isinstance(item, dict) and isinstance(item.get("type"), str):
        name: str = item["type"]
        cls = COMPONENT_TYPES.get(name)
        if cls is None:
            return Unknown(text=f"Unknown component type: {name}")
        try:
            return cls.model_validate(item)
        except ValidationError as exc:
            return Unknown(text=f"Invalid {name} component: {exc.errors()[0]['msg']}")
    return Unknown(text=f"Invalid component data: {item}")


class MessageChain(RootModel[list[SerializeAsAny[MessageComponent]]]):
    """An ordered list of message components that also behaves like a list."""

    model_config = ConfigDict(defer_build=True)

    def __init__(self, root: Iterable[MessageComponent | dict[str, Any]] | None = None) -> None:
        """Components, or their wire dicts. Anything else raises :class:`ValueError`
        (a string, a number), as the reference's constructor does; received data is
        read leniently by ``model_validate`` instead."""
        given = cast(object, root)
        if isinstance(given, str | bytes | Mapping) or not (
            given is None or isinstance(given, Iterable)
        ):
            raise ValueError(f"root must be a list of message components, not {type(given)}")
        items: list[Any] = list(root) if root is not None else []
        for item in items:
            if not isinstance(item, MessageComponent) and not (
                isinstance(item, dict) and isinstance(item.get("type"), str)  # pyright: ignore[reportUnknownMemberType]
            ):
                raise ValueError(f"root must be a list of MessageComponent, but got {type(item)}")
        super().__init__(root=items)

    @model_validator(mode="before")
    @classmethod
    def _build_components(cls, data: Any) -> Any:
        if isinstance(data, list | tuple):
            return [_to_component(item) for item in data]  # pyright: ignore[reportUnknownVariableType]
        return data

    # ------------------------------------------------------------------ queries

    def get_first(self, t: type[MessageComponent]) -> MessageComponent | None:
        """The first component of class ``t`` (or a subclass), if any."""
        return next((c for c in self.root if isinstance(c, t)), None)

    @property
    def source(self) -> Source | None:
        """The chain's :class:`Source` component, if any."""
        found = self.get_first(Source)
        return found if isinstance(found, Source) else None

    @property
    def message_id(self) -> int | str:
        """The id of the chain's :class:`Source`, or ``-1`` without one."""
        source = self.source
        return source.id if source is not None else -1

    # ------------------------------------------------------------------ list behaviour

    def __len__(self) -> int:
        return len(self.root)

    def __getitem__(self, index: int) -> MessageComponent:
        return self.root[index]

    def __setitem__(self, index: int, value: MessageComponent) -> None:
        self.root[index] = value

    def __delitem__(self, index: int) -> None:
        del self.root[index]

    def __iter__(self) -> Iterator[MessageComponent]:  # pyright: ignore[reportIncompatibleMethodOverride]
        return iter(self.root)

    def __contains__(self, item: MessageComponent | type[MessageComponent]) -> bool:
        if isinstance(item, type):
            return any(isinstance(c, item) for c in self.root)
        return item in self.root

    def __str__(self) -> str:
        return "".join(str(c) for c in self.root if not isinstance(c, Source))

    def __repr__(self) -> str:
        return f"MessageChain({self.root!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MessageChain) and self.root == other.root

    def __hash__(self) -> int:
        # Consistent with __eq__: equal chains have the same sequence of classes.
        return hash(tuple(type(c).__name__ for c in self.root))

    def __add__(self, other: MessageChain | Sequence[MessageComponent]) -> MessageChain:
        extra = other.root if isinstance(other, MessageChain) else other
        return MessageChain([*self.root, *extra])

    def __radd__(self, other: MessageChain | Sequence[MessageComponent]) -> MessageChain:
        extra = other.root if isinstance(other, MessageChain) else other
        return MessageChain([*extra, *self.root])

    def append(self, item: MessageComponent) -> None:
        self.root.append(item)

    def extend(self, items: Iterable[MessageComponent]) -> None:
        self.root.extend(items)

    def insert(self, index: int, item: MessageComponent) -> None:
        self.root.insert(index, item)

    def pop(self, index: int = -1) -> MessageComponent:
        return self.root.pop(index)

    def remove(self, item: MessageComponent) -> None:
        self.root.remove(item)

    def clear(self) -> None:
        self.root.clear()


# ---------------------------------------------------------------------- components


def epoch_to_datetime(value: Any) -> Any:
    """Epoch seconds (not a bool) as an aware UTC datetime; anything else as it is."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, tz=UTC)
    return value


class Source(MessageComponent):
    """Where a message came from; the first component of a received chain.

    The wire form stores ``time`` as ``timestamp`` (integer epoch seconds).
    """

    type: str = "Source"
    id: int | str
    time: datetime

    @model_validator(mode="before")
    @classmethod
    def _read_timestamp(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)  # never modify the caller's dict
            stamp = data.pop("timestamp", None)
            if "time" not in data and stamp is not None:
                data["time"] = stamp
            if "time" in data:
                data["time"] = epoch_to_datetime(data["time"])
        return data

    @model_serializer(mode="wrap")
    def _write_timestamp(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        dumped.pop("time", None)
        dumped["timestamp"] = int(self.time.timestamp())
        return dumped


class Plain(MessageComponent):
    """Plain text."""

    type: str = "Plain"
    text: str = ""

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Plain({self.text!r})"


class Quote(MessageComponent):
    """A quoted earlier message."""

    type: str = "Quote"
    id: int | str | None = None
    group_id: int | str | None = None
    sender_id: int | str | None = None
    target_id: int | str | None = None
    origin: MessageChain


class At(MessageComponent):
    """A mention of one member; two mentions are equal when they name the same target."""

    type: str = "At"
    target: int | str
    display: str | None = ""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, At) and self.target == other.target

    def __hash__(self) -> int:
        return hash(("At", self.target))

    def __str__(self) -> str:
        return f"@{self.display or self.target}"


class AtAll(MessageComponent):
    """A mention of everyone."""

    type: str = "AtAll"

    def __str__(self) -> str:
        return "@All"


class Unknown(MessageComponent):
    """A component this SDK does not know (its ``text`` says what arrived)."""

    type: str = "Unknown"
    text: str = ""

    def __str__(self) -> str:
        return f"Unknown Message: {self.text}"


class ForwardMessageNode(BaseModel):
    """One message inside a merged forward."""

    model_config = ConfigDict(defer_build=True)

    sender_id: int | str | None = ""
    sender_name: str | None = ""
    message_chain: MessageChain | None = Field(default_factory=MessageChain)
    message_id: int | None = 0


class ForwardMessageDiaplay(BaseModel):
    """How a merged forward is shown (the misspelt name is the public one)."""

    model_config = ConfigDict(defer_build=True)

    title: str = "Chat history of the group"
    brief: str = "[Chat history]"
    source: str = "Chat history"
    preview: list[str] = Field(default_factory=list)
    summary: str = "View x forwarded messages"


#: Correctly spelt alias of :class:`ForwardMessageDiaplay`.
ForwardMessageDisplay = ForwardMessageDiaplay


class Forward(MessageComponent):
    """A merged forward of several messages."""

    type: str = "Forward"
    display: ForwardMessageDiaplay = Field(default_factory=ForwardMessageDiaplay)
    node_list: list[ForwardMessageNode] = Field(default_factory=list)

    def __str__(self) -> str:
        return "[Chat history]"


#: Wire ``type`` string -> component class.
COMPONENT_TYPES: dict[str, type[MessageComponent]] = {
    cls.model_fields["type"].default: cls
    for cls in (
        Source,
        Plain,
        Quote,
        At,
        AtAll,
        Image,
        Unknown,
        Voice,
        Forward,
        File,
        Face,
        *_wechat.WECHAT_COMPONENTS,
    )
}
