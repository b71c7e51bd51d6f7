from langbot_plugin.api.definition.components.common.event_listener import EventListener
from langbot_plugin.api.entities import events
from langbot_plugin.api.entities.context import EventContext


class Watch(EventListener):
    def __init__(self) -> None:
        super().__init__()

        @self.handler(events.PersonNormalMessageReceived)
        async def on_message(ctx: EventContext) -> None:
            if str(getattr(ctx.event, "text_message", "")) == "stop":
                ctx.prevent_default()
