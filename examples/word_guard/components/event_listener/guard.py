"""An EventListener: reacts to messages before LangBot answers them.

* ``ping`` gets ``pong`` and LangBot's own answer is skipped (``prevent_default``).
* A message with a blocked word (the plugin setting ``blocked_words``) gets a warning,
  is not answered, and later plugins do not see it (``prevent_postorder``); how many
  were held back is kept in the plugin's storage, so it survives a restart.
* Anything else passes untouched.
"""

from langbot_plugin.api.definition.components.common.event_listener import EventListener
from langbot_plugin.api.entities import events
from langbot_plugin.api.entities.builtin.platform.message import MessageChain, Plain
from langbot_plugin.api.entities.context import EventContext

HELD_KEY = "held_back"


class Guard(EventListener):
    def __init__(self) -> None:
        super().__init__()

        @self.handler(events.PersonNormalMessageReceived)
        @self.handler(events.GroupNormalMessageReceived)
        async def on_message(ctx: EventContext) -> None:
            text = str(getattr(ctx.event, "text_message", "")).strip()
            if text.lower() == "ping":
                await ctx.reply(MessageChain([Plain(text="pong")]))
                ctx.prevent_default()
                return
            blocked = [str(w).lower() for w in self.plugin.get_config().get("blocked_words", [])]
            hits = [w for w in blocked if w and w in text.lower()]
            if not hits:
                return
            await ctx.reply(MessageChain([Plain(text="Please keep it friendly.")]))
            ctx.prevent_default()
            ctx.prevent_postorder()
            await self._count_held_back()

    async def _count_held_back(self) -> None:
        keys = await self.plugin.get_plugin_storage_keys()
        held = int(await self.plugin.get_plugin_storage(HELD_KEY)) if HELD_KEY in keys else 0
        await self.plugin.set_plugin_storage(HELD_KEY, str(held + 1).encode())
