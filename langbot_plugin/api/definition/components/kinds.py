"""The component kinds: one registry, built from each SDK class's ``__kind__``.

Every place that knows the kinds (discovery, ``lbp build``'s code check, the worker,
the tests tying ``langbot_plugin.cli.scaffold.KINDS`` to it) reads them here; a new kind
is its SDK class (with ``__kind__``) and one line in :data:`KINDS` (docs/architecture.md,
"Adding a component kind").
"""

from __future__ import annotations

from dataclasses import dataclass

from langbot_plugin.api.definition.components.agent_runner.runner import AgentRunner
from langbot_plugin.api.definition.components.base import BaseComponent
from langbot_plugin.api.definition.components.command.command import Command
from langbot_plugin.api.definition.components.common.event_listener import EventListener
from langbot_plugin.api.definition.components.knowledge_engine.engine import KnowledgeEngine
from langbot_plugin.api.definition.components.page import Page
from langbot_plugin.api.definition.components.parser.parser import Parser
from langbot_plugin.api.definition.components.runner.runner import Runner
from langbot_plugin.api.definition.components.tool.tool import Tool

__all__ = ["COMPONENT_KINDS", "KINDS", "ComponentKindEntry", "kinds_sharing"]


@dataclass(frozen=True, slots=True)
class ComponentKindEntry:
    """One component kind: the SDK class that names it, and the class a component of
    the kind must subclass (the same one, except for an older name of a kind)."""

    cls: type[BaseComponent]
    base: type[BaseComponent]

    @property
    def name(self) -> str:
        """The manifest ``kind`` (the class's ``__kind__``)."""
        return self.cls.__kind__

    @property
    def abstract_methods(self) -> tuple[str, ...]:
        """What a component class must define (its base's abstract methods)."""
        return tuple(sorted(self.base.__abstractmethods__))


def _registry(
    *entries: type[BaseComponent] | tuple[type[BaseComponent], type[BaseComponent]],
) -> dict[str, ComponentKindEntry]:
    kinds: dict[str, ComponentKindEntry] = {}
    for entry in entries:
        cls, base = entry if isinstance(entry, tuple) else (entry, entry)
        if not cls.__dict__.get("__kind__"):
            raise TypeError(f"{cls.__name__} does not declare its __kind__")
        kinds[cls.__kind__] = ComponentKindEntry(cls, base)
    return kinds


#: Every kind, in the order the worker initializes components (listeners first, so
#: they see what the others do; runners last). ``Runner`` is the 0.7 API's name of
#: the runner kind: its components subclass :class:`AgentRunner`.
KINDS: dict[str, ComponentKindEntry] = _registry(
    EventListener,
    Tool,
    Command,
    KnowledgeEngine,
    Parser,
    Page,
    AgentRunner,
    (Runner, AgentRunner),
)

#: The kinds' names, sorted (what discovery accepts and names in its error).
COMPONENT_KINDS: tuple[str, ...] = tuple(sorted(KINDS))


def kinds_sharing(kind: str) -> tuple[str, ...]:
    """The kinds whose components subclass the same base as ``kind``'s (they share one
    name space: ``AgentRunner`` and ``Runner``); ``(kind,)`` for an unknown kind."""
    entry = KINDS.get(kind)
    if entry is None:
        return (kind,)
    return tuple(name for name, other in KINDS.items() if other.base is entry.base)
