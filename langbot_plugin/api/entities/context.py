"""The context an event handler receives.

On the wire an ``EventContext`` carries ``event_name`` and the ``event`` dict; the
event is validated as the class ``event_name`` names (an unknown name is a clear
validation error, not an ``AttributeError``). Handlers get an
:class:`~langbot_plugin.api.proxies.event_context.EventContextProxy`, which adds the
query APIs (``reply``, ``get_bot_uuid``, ...).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any, ClassVar, cast

from pydantic import SerializeAsAny, ValidationInfo, field_validator, model_validator

from langbot_plugin.api.entities import events as events_module
from langbot_plugin.api.entities._query_calls import UnconnectedQueryCalls
from langbot_plugin.api.entities.events import BaseEventModel
from langbot_plugin.api.entities.execution import WorkspaceExecutionScope

__all__ = ["BaseEventModel", "EventContext", "WorkspaceExecutionScope", "global_eid_index"]

#: Host side: the ``eid`` the next :meth:`EventContext.from_event` assigns.
global_eid_index = 0

#: Host side: contexts created by :meth:`EventContext.from_event`, by ``eid``.
cached_event_contexts: weakref.WeakValueDictionary[int, EventContext] = (
    weakref.WeakValueDictionary()
)


class EventContext(UnconnectedQueryCalls, WorkspaceExecutionScope):
    """One event on its way through the plugins, and what handlers decided."""

    query_id: int = 0
    query_uuid: str | None = None
    #: Event number assigned by the host.
    eid: int = 0
    event_name: str
    event: SerializeAsAny[BaseEventModel]
    #: Set by :meth:`prevent_default`: the host skips its default handling.
    is_prevent_default: bool = False
    #: Set by :meth:`prevent_postorder`: later plugins do not see the event.
    is_prevent_postorder: bool = False

    unconnected_hint: ClassVar[str] = "event handlers receive an EventContextProxy"

    @field_validator("event", mode="before")
    @classmethod
    def validate_event(cls, v: Any, info: ValidationInfo) -> Any:
        """A mapping becomes the event class its ``event_name`` (or the context's)
        names; an unknown name is a validation error listing the known ones."""
        if not isinstance(v, Mapping):
            return v
        event = cast(Mapping[str, Any], v)
        name = event.get("event_name", info.data.get("event_name"))
        if not isinstance(name, str):
            raise ValueError("an event needs an event_name")
        return events_module.event_class(name).model_validate(event)

    @model_validator(mode="after")
    def align_event_execution_scope(self) -> EventContext:
        """Share the workspace scope and ``query_uuid`` between the context and its
        event, refusing values that contradict each other."""
        self.inherit_execution_scope(self.event)
        self.event.inherit_execution_scope(self)
        if self.query_uuid is None:
            self.query_uuid = self.event.query_uuid
        elif self.event.query_uuid is not None and self.query_uuid != self.event.query_uuid:
            raise ValueError("EventContext query_uuid does not match Event query_uuid")
        if self.event.query_uuid is None:
            self.event.query_uuid = self.query_uuid
        return self

    # ------------------------------------------------------------------ handler decisions

    def prevent_default(self) -> None:
        """Ask the host to skip its default handling of the event."""
        self.is_prevent_default = True

    def prevent_postorder(self) -> None:
        """Stop the event from reaching plugins after this one."""
        self.is_prevent_postorder = True

    def is_prevented_default(self) -> bool:
        return self.is_prevent_default

    def is_prevented_postorder(self) -> bool:
        return self.is_prevent_postorder

    # ------------------------------------------------------------------ host side

    @classmethod
    def from_event(cls, event: BaseEventModel) -> EventContext:
        """Wrap an event the host is about to emit (assigns the next ``eid``)."""
        global global_eid_index
        query = event.query
        scope_source: WorkspaceExecutionScope = query if query is not None else event
        eid, global_eid_index = global_eid_index, global_eid_index + 1
        context = cls(
            instance_uuid=scope_source.instance_uuid,
            workspace_uuid=scope_source.workspace_uuid,
            placement_generation=scope_source.placement_generation,
            query_id=query.query_id if query is not None else 0,
            query_uuid=query.query_uuid if query is not None else event.query_uuid,
            eid=eid,
            event_name=type(event).__name__,
            event=event,
        )
        cached_event_contexts[context.eid] = context
        return context
