from langbot_plugin.api.definition.components.common.event_listener import EventListener
from langbot_plugin.api.entities import context, events


class DefaultEventListener(EventListener):
    """Never loaded: its manifest has no spec, so neither runtime reads it."""

    async def initialize(self) -> None:
        @self.handler(events.PersonMessageReceived)
        async def on_message(event_context: context.EventContext) -> None:
            event_context.prevent_default()
