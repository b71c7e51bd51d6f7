from langbot_plugin.api.definition.components.common.event_listener import EventListener
from langbot_plugin.api.entities import context, events


class Greeter(EventListener):
    """The real listener beside default.yaml; its manifest's spec is empty (null), as the
    reference's own template writes it."""

    async def initialize(self) -> None:
        await super().initialize()

        @self.handler(events.PersonMessageReceived)
        async def on_message(event_context: context.EventContext) -> None:
            event_context.prevent_postorder()
