"""The managed-process relay: one WebSocket connection bridged to one process's stdio.

Authentication and the lookup of the process happen in :mod:`box_runtime.server` before
:func:`serve_relay` runs; framing is :mod:`box_runtime.framing`'s. The newest attach
wins (the older connection is closed with :data:`CLOSE_REPLACED`), and the process
outlives every connection. Paths, close codes and limits: docs/box.md, *The relay*.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import anyio
from aiohttp import WSMsgType, web

from box_runtime.framing import (
    INVALID_REQUEST,
    MAX_MESSAGE_BYTES,
    FrameError,
    error_frame,
    line_for_process,
)
from box_runtime.managed_process import Attachment, ManagedProcess

__all__ = [
    "CLOSE_EXITED",
    "CLOSE_REPLACED",
    "HEARTBEAT_SEC",
    "REFUSED",
    "RELAY_SUBPROTOCOL",
    "TO_CLIENT",
    "TO_PROCESS",
    "FrameCount",
    "relay_response",
    "serve_relay",
]

logger = logging.getLogger("box_runtime.relay")

RELAY_SUBPROTOCOL = "mcp"
CLOSE_EXITED = 1000
CLOSE_REPLACED = 4001
#: Server pings keep an idle relay alive and find half-open clients.
HEARTBEAT_SEC = 30.0
#: How long the close waits for the exit status once the process's stdout ended.
EXIT_STATUS_WAIT_SEC = 2.0
#: What :func:`serve_relay` counts: a frame written to the process, one sent to the
#: client, one refused with a JSON-RPC error (``lbp_box_relay_frames_total``).
TO_PROCESS, TO_CLIENT, REFUSED = "to_process", "to_client", "refused"
FrameCount = Callable[[str], None]


def relay_response() -> web.WebSocketResponse:
    """The WebSocket response of one relay connection (prepare it, then :func:`serve_relay`)."""
    return web.WebSocketResponse(
        protocols=(RELAY_SUBPROTOCOL,),
        heartbeat=HEARTBEAT_SEC,
        max_msg_size=2 * MAX_MESSAGE_BYTES,
        # No permessage-deflate: compressing every JSON-RPC message costs more CPU
        # than loopback or LAN bandwidth saves (a 4 MiB message takes tens of ms).
        compress=False,
    )


def _uncounted(direction: str) -> None:
    pass


async def serve_relay(
    ws: web.WebSocketResponse, process: ManagedProcess, count: FrameCount = _uncounted
) -> None:
    """Bridge a prepared WebSocket to ``process`` until either side ends; ``count`` is
    told of each frame passed on (``to_process``, ``to_client``) or refused."""
    attachment = process.attach()

    async def sink(text: str) -> None:
        await ws.send_str(text)
        count(TO_CLIENT)

    attachment.sink = sink
    logger.info(
        "Box relay: client attached to managed process %s of session %s (attach %d)",
        process.process_id,
        process.key.session_id,
        attachment.number,
    )
    ended = False
    try:
        with attachment.scope:
            async with anyio.create_task_group() as tg:

                async def to_client() -> None:
                    nonlocal ended
                    try:
                        await _to_client(ws, process, attachment, count)
                    except ConnectionError:
                        pass  # the client went away mid-send; its message waits for the next
                    else:
                        ended = True
                    tg.cancel_scope.cancel()

                tg.start_soon(to_client)
                await _to_process(ws, process, count)
                tg.cancel_scope.cancel()
    finally:
        process.detach(attachment)
        with anyio.CancelScope(shield=True):
            await _close(ws, process, attachment, ended)


async def _to_client(
    ws: web.WebSocketResponse, process: ManagedProcess, attachment: Attachment, count: FrameCount
) -> None:
    """Send what waits in the queue (the stdout reader sends directly when nothing does)."""
    outbox = process.outbox
    while True:
        try:
            text, size = await outbox.get_sized()
        except anyio.EndOfStream:
            return
        attachment.sending = True
        try:
            await ws.send_str(text)
        except anyio.get_cancelled_exc_class():
            raise  # replaced: the frame was already written to the old connection
        except Exception:
            outbox.put_back(text, size)  # the connection was gone: the next attach sends it
            raise
        finally:
            attachment.sending = False
        count(TO_CLIENT)


async def _to_process(
    ws: web.WebSocketResponse, process: ManagedProcess, count: FrameCount
) -> None:
    async for message in ws:
        if message.type is WSMsgType.TEXT:
            try:
                line = line_for_process(message.data)
            except FrameError as exc:
                count(REFUSED)
                await ws.send_str(
                    error_frame(exc.code, f"Box relay: {exc.message}", exc.request_id)
                )
                continue
            try:
                await process.to_process(line)
            except anyio.ClosedResourceError:
                return  # the process closed its stdin or exited; the close says which
            count(TO_PROCESS)
        elif message.type is WSMsgType.BINARY:
            count(REFUSED)
            await ws.send_str(
                error_frame(
                    INVALID_REQUEST, "Box relay: send JSON-RPC messages as text frames, not binary"
                )
            )
        elif message.type is WSMsgType.ERROR:
            logger.info("Box relay for %s: %s", process.process_id, ws.exception())
            return


async def _close(
    ws: web.WebSocketResponse, process: ManagedProcess, attachment: Attachment, ended: bool
) -> None:
    if ws.closed:
        return
    if attachment.replaced:
        await ws.close(code=CLOSE_REPLACED, message=b"replaced by a newer attach to this process")
    elif ended:
        with anyio.move_on_after(EXIT_STATUS_WAIT_SEC):  # stdout ends a moment before the exit
            await process.exited.wait()
        status = "unknown" if process.exit_code is None else str(process.exit_code)
        await ws.close(
            code=CLOSE_EXITED, message=f"managed process exited (status {status})".encode()
        )
    else:
        await ws.close()
