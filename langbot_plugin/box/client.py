"""The host's Box client: ``ActionRPCBoxClient`` calls the Box over a Handler's RPC session.

An adapter over :class:`box_runtime.client.BoxClient` (the one Box client), so it waits
as each action's declaration says. It adds the host's face: the reference's method
names and signatures, the answer as the dict (or model) the host reads, a whole
:class:`~box_runtime.models.BoxSpec` sent as the host built it, and the reference's
errors (the Box's own classes, any other RPC error as
:class:`~box_runtime.errors.BoxError`, a missing or lost link as
:class:`~box_runtime.errors.BoxRuntimeUnavailableError`). ``action_context`` scopes a
call to a workspace, as the envelope ``context``.
"""

from __future__ import annotations

import logging
from typing import Any

from box_runtime import protocol as p
from box_runtime.client import BoxClient, relay_url
from box_runtime.errors import BoxError, BoxRuntimeUnavailableError
from box_runtime.models import BoxExecutionResult, BoxSpec
from box_runtime.process_models import DEFAULT_PROCESS_ID, ManagedProcessInfo, ManagedProcessSpec
from langbot_plugin.box.models import SandboxAdmissionGrant, SandboxAdmissionRevocation
from langbot_plugin.box.tenancy import namespace_session_id
from langbot_plugin.entities.io.context import ActionContext
from langbot_plugin.protocol.spec import ActionSpec
from langbot_plugin.rpc.errors import ConnectionClosedError, RPCError
from langbot_plugin.runtime.io.handler import Handler

__all__ = ["ActionRPCBoxClient", "BoxRuntimeClient"]

Context = ActionContext | dict[str, Any] | None


class BoxRuntimeClient:
    """What a host's Box service needs of a Box runtime: each method is one Box action
    sent through :meth:`_call` (which :class:`ActionRPCBoxClient` implements over a
    Handler); a client of its own may override the methods instead."""

    async def _call(
        self,
        spec: ActionSpec[Any, Any],
        data: dict[str, Any] | None = None,
        action_context: Context = None,
    ) -> dict[str, Any]:
        raise NotImplementedError

    async def initialize(self) -> None:
        try:
            await self._call(p.BOX_HEALTH)
        except BoxError as exc:
            raise BoxRuntimeUnavailableError(f"box runtime unavailable: {exc}") from exc

    async def execute(self, spec: BoxSpec, action_context: Context = None) -> BoxExecutionResult:
        data = await self._call(p.BOX_EXEC, spec.model_dump(mode="json"), action_context)
        return BoxExecutionResult.model_validate(data)

    async def shutdown(self) -> None:
        await self._call(p.BOX_SHUTDOWN)

    async def get_status(self, action_context: Context = None) -> dict[str, Any]:
        return await self._call(p.BOX_STATUS, None, action_context)

    async def get_sessions(self, action_context: Context = None) -> list[dict[str, Any]]:
        data = await self._call(p.BOX_GET_SESSIONS, None, action_context)
        return list(data.get("sessions", []))

    async def get_session(self, session_id: str, action_context: Context = None) -> dict[str, Any]:
        return await self._call(p.BOX_GET_SESSION, {"session_id": session_id}, action_context)

    async def get_backend_info(self) -> dict[str, Any]:
        return await self._call(p.BOX_GET_BACKEND_INFO)

    async def get_storage_analysis(self, action_context: Context = None) -> dict[str, Any]:
        return await self._call(p.BOX_GET_STORAGE_ANALYSIS, None, action_context)

    async def get_audit(
        self,
        session_id: str | None = None,
        *,
        after_seq: int = 0,
        limit: int = 200,
        action_context: Context = None,
    ) -> dict[str, Any]:
        """The Box's audit of one session, or of the context's workspace (ours: the
        reference has no Box audit): ``{events, last_seq, dropped}``."""
        query = p.AuditQuery(session_id=session_id, after_seq=after_seq, limit=limit)
        return await self._call(p.BOX_GET_AUDIT, query.model_dump(), action_context)

    async def delete_session(self, session_id: str, action_context: Context = None) -> None:
        await self._call(p.BOX_DELETE_SESSION, {"session_id": session_id}, action_context)

    async def create_session(self, spec: BoxSpec, action_context: Context = None) -> dict[str, Any]:
        return await self._call(p.BOX_CREATE_SESSION, spec.model_dump(mode="json"), action_context)

    async def start_managed_process(
        self, session_id: str, spec: ManagedProcessSpec, action_context: Context = None
    ) -> ManagedProcessInfo:
        start = {"session_id": session_id, "spec": spec.model_dump(mode="json")}
        data = await self._call(p.BOX_START_MANAGED_PROCESS, start, action_context)
        return ManagedProcessInfo.model_validate(data)

    async def get_managed_process(
        self, session_id: str, process_id: str = DEFAULT_PROCESS_ID, action_context: Context = None
    ) -> ManagedProcessInfo:
        ref = {"session_id": session_id, "process_id": process_id}
        data = await self._call(p.BOX_GET_MANAGED_PROCESS, ref, action_context)
        return ManagedProcessInfo.model_validate(data)

    async def stop_managed_process(
        self, session_id: str, process_id: str = DEFAULT_PROCESS_ID, action_context: Context = None
    ) -> None:
        ref = {"session_id": session_id, "process_id": process_id}
        await self._call(p.BOX_STOP_MANAGED_PROCESS, ref, action_context)

    async def init(self, config: dict[str, Any]) -> None:
        await self._call(p.BOX_INIT, config)

    async def verify_shared_workspace(self, marker_name: str) -> dict[str, Any]:
        return await self._call(p.BOX_VERIFY_SHARED_WORKSPACE, {"marker_name": marker_name})

    async def upsert_sandbox_admission_grant(self, grant: SandboxAdmissionGrant) -> dict[str, Any]:
        return await self._call(p.BOX_UPSERT_SANDBOX_ADMISSION_GRANT, grant.model_dump(mode="json"))

    async def revoke_sandbox_admission_grant(
        self, revocation: SandboxAdmissionRevocation
    ) -> dict[str, Any]:
        data = revocation.model_dump(mode="json")
        return await self._call(p.BOX_REVOKE_SANDBOX_ADMISSION_GRANT, data)


class ActionRPCBoxClient(BoxRuntimeClient):
    """A :class:`BoxRuntimeClient` over the session of the connector's current Handler."""

    def __init__(self, logger: logging.Logger | None = None) -> None:
        self._logger = logger or logging.getLogger("langbot_plugin.box")
        self._handler: Handler | None = None

    @property
    def handler(self) -> Handler:
        if self._handler is None or self._handler.closed:
            raise BoxRuntimeUnavailableError("box runtime not connected")
        return self._handler

    def set_handler(self, handler: Handler | None) -> None:
        self._handler = handler

    async def _call(
        self,
        spec: ActionSpec[Any, Any],
        data: dict[str, Any] | None = None,
        action_context: Context = None,
    ) -> dict[str, Any]:
        handler = self.handler
        scope = handler.resolve_outbound_action_context(action_context)
        context = None if scope is None else scope.model_dump(exclude_none=True)
        try:
            return await BoxClient(handler.session, context=context).send(spec, data or {})
        except ConnectionClosedError as exc:
            raise BoxRuntimeUnavailableError(f"box runtime connection lost: {exc.message}") from exc
        except BoxError:
            raise
        except RPCError as exc:
            raise BoxError(f"{exc.wire_type}: {exc.message}") from exc

    async def initialize(self) -> None:
        await super().initialize()
        self._logger.info("LangBot Box runtime connected via action RPC.")

    async def shutdown(self) -> None:
        if self._handler is None:
            return
        try:
            await super().shutdown()
        except BoxError as exc:
            self._logger.debug("Box shutdown during cleanup failed: %s", exc)
        self._handler = None

    def get_managed_process_websocket_url(
        self,
        session_id: str,
        ws_relay_base_url: str,
        process_id: str = DEFAULT_PROCESS_ID,
        action_context: Context = None,
    ) -> str:
        """The relay address of a managed process (``http(s)://`` becomes ``ws(s)://``)."""
        if action_context is not None:
            session_id = namespace_session_id(action_context, session_id)
        base = ws_relay_base_url
        for plain, secure in (("http://", "ws://"), ("https://", "wss://")):
            if base.startswith(plain):
                base = secure + base[len(plain) :]
        if "://" not in base:
            base = "ws://" + base
        return relay_url(base, session_id, process_id)
