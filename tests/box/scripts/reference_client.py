"""Drive a Box with the reference host-side client (langbot-plugin 0.7.18), as the host does.

Run with the reference SDK's interpreter: ``reference_client.py WS_URL IMAGE``. It
connects like ``langbot.pkg.box.connector`` (WebSocketClientController with the instance
header, a plain Handler, __ping then box_init), then uses ``ActionRPCBoxClient`` with an
``ActionContext``, printing one JSON object per step on stdout.
"""

import asyncio
import json
import logging
import sys

from langbot_plugin.box.actions import LangBotToBoxAction
from langbot_plugin.box.client import ActionRPCBoxClient
from langbot_plugin.box.errors import BoxSessionNotFoundError, BoxValidationError
from langbot_plugin.box.models import BoxSpec
from langbot_plugin.entities.io.actions.enums import CommonAction
from langbot_plugin.entities.io.context import ActionContext
from langbot_plugin.runtime.io.controllers.ws.client import WebSocketClientController
from langbot_plugin.runtime.io.handler import Handler

INSTANCE = "instance_ref-client"
CONTEXT = ActionContext(instance_uuid=INSTANCE, workspace_uuid="ws-ref", placement_generation=1)


def emit(step, value):
    print(json.dumps({"step": step, "value": value}, default=str), flush=True)


async def main(url, image):
    client = ActionRPCBoxClient(logger=logging.getLogger("ref"))
    done = asyncio.Event()

    async def on_connect(connection):
        handler = Handler(connection)
        client.set_handler(handler)
        task = asyncio.create_task(handler.run())
        try:
            await handler.call_action(CommonAction.PING, {})
            await handler.call_action(
                LangBotToBoxAction.INIT,
                {"backend": "local", "local": {"profile": "default", "image": image}},
            )
            emit("backend", await client.get_backend_info())
            spec = BoxSpec(session_id="ref-session", cmd="echo from-reference", image=image)
            emit("create", await client.create_session(spec, action_context=CONTEXT))
            result = await client.execute(spec, action_context=CONTEXT)
            emit("exec", result.model_dump(mode="json"))
            emit("sessions", await client.get_sessions(action_context=CONTEXT))
            emit("status", await client.get_status(action_context=CONTEXT))
            try:
                await client.get_session("missing", action_context=CONTEXT)
            except BoxSessionNotFoundError as exc:
                emit("not_found", type(exc).__name__)
            try:
                await client.execute(
                    BoxSpec(session_id="ref-session", cmd="true", image=image, env={"1bad": "x"}),
                    action_context=CONTEXT,
                )
            except BoxValidationError as exc:
                emit("validation", type(exc).__name__)
            await client.delete_session("ref-session", action_context=CONTEXT)
            emit("after_delete", await client.get_sessions(action_context=CONTEXT))
            await client.shutdown()
        finally:
            task.cancel()
            done.set()

    async def on_failed(_controller, exc):
        emit("connect_failed", repr(exc))
        done.set()

    controller = WebSocketClientController(
        ws_url=url,
        make_connection_failed_callback=on_failed,
        additional_headers={"X-LangBot-Instance-Id": INSTANCE},
    )
    runner = asyncio.create_task(controller.run(on_connect))
    await asyncio.wait_for(done.wait(), 60)
    runner.cancel()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
