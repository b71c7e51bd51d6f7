"""The file actions of the service table: ``export_box_files`` and the run's own replies
(``call_platform_api`` ``send_message`` on its ``event_reply`` context tool, which is
how ``reply_files`` delivers exported files).

Both are authorized like every run-scoped call (:meth:`RunServices.session`) and then
by what :data:`~langbot_plugin.protocol.run_needs.NEEDS` declares for them
(``available_apis.box``; the ``event_reply`` tool). The work is
:class:`~langbot_plugin.host.box_files.BoxFiles`'s; a reply is recorded on the run
(:attr:`RunSession.deliveries`), since this host has no platform to send it to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langbot_plugin.host.box_files import HeldFile
from langbot_plugin.host.deliveries import Delivery
from langbot_plugin.host.gate import CHECKS
from langbot_plugin.protocol.host_api import box, messaging
from langbot_plugin.rpc import RequestContext
from langbot_plugin.rpc.errors import InvalidParamsError, NotSupportedError

if TYPE_CHECKING:
    from langbot_plugin.host.services import RunServices

__all__ = ["call_platform_api", "export_box_files"]


async def export_box_files(
    services: RunServices, p: box.ExportBoxFilesParams, ctx: RequestContext
) -> box.ExportedBoxFiles:
    session = services.session(p.run_id, ctx, box.EXPORT_BOX_FILES)
    return await services.files.export(session.run_id, p.paths)


async def call_platform_api(
    services: RunServices, p: messaging.PlatformApiParams, ctx: RequestContext
) -> messaging.PlatformApiResult:
    session = services.session(p.run_id, ctx)
    CHECKS[messaging.CALL_PLATFORM_API.name](session, ctx.data)
    if p.action != messaging.SEND_MESSAGE.name or p.context_tool != messaging.EVENT_REPLY_TOOL:
        raise NotSupportedError(
            "this host answers only a run's replies on its own event "
            "(action send_message, context_tool event_reply)",
            details={"action": p.action, "context_tool": p.context_tool},
        )
    message: Any = p.params.get("message", [])
    if not isinstance(message, list):
        raise InvalidParamsError("params.message must be a message chain (a list)")
    chain: list[dict[str, Any]] = [dict(c) for c in message if isinstance(c, dict)]  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]

    async def send(files: list[HeldFile]) -> messaging.PlatformApiResult:
        if not chain and not files:
            raise InvalidParamsError("Message must not be empty")
        sent = Delivery("reply", tuple(f.delivered_form() for f in files), chain)
        session.deliveries.append(sent)
        return messaging.PlatformApiResult(result={"sent": True, "file_ids": [f.id for f in files]})

    if p.file_ids is None:
        return await send([])
    return await services.files.deliver(session.run_id, p.file_ids, send)
