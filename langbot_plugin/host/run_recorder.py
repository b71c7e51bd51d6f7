"""What each accepted result of a run does on the host.

:class:`RunRecorder` is the writing part of
:class:`~langbot_plugin.host.run_host.RunHost`'s drive loop: each result goes to the
run's ledger and, by type, to the run's state, the platform actions
(:mod:`langbot_plugin.host.platform_actions`), the artifact store, the transcript and
the file deliveries. A result is recorded whole, even when a cancel or the deadline
comes meanwhile.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio

from langbot_plugin.host.box_files import HeldFile
from langbot_plugin.host.deliveries import Delivery
from langbot_plugin.host.platform_actions import PlatformActions
from langbot_plugin.host.registry import RunSession
from langbot_plugin.host.results import NormalizedResult
from langbot_plugin.host.run_outcome import OnResult, RunOutcome
from langbot_plugin.host.services import RunServices
from langbot_plugin.rpc.errors import RPCError

__all__ = ["ARTIFACT_CREATED", "RunRecorder"]

#: Protocol v1's result type of a runner that made an artifact.
ARTIFACT_CREATED = "artifact.created"


class RunRecorder:
    """Applies a run's results to the registry and the stores (see the module docstring)."""

    def __init__(self, services: RunServices, *, actions: PlatformActions | None = None) -> None:
        #: The platform actions this host executes for ``action.requested`` results.
        self.actions = actions if actions is not None else PlatformActions()
        self.services = services

    async def attach_files(self, session: RunSession, result: NormalizedResult) -> None:
        """Deliver the files a ``message.completed`` names with it (once, all or none)."""
        ids = result.data.get("file_ids") if result.type == "message.completed" else None
        if not ids:
            return
        message = result.data.get("message")

        async def send(files: list[HeldFile]) -> None:
            content = message.get("content") if isinstance(message, Mapping) else None
            chain: list[dict[str, Any]] = (
                [{"type": "Plain", "text": content}] if isinstance(content, str) and content else []
            )
            files_sent = tuple(f.delivered_form() for f in files)
            session.deliveries.append(Delivery("message", files_sent, chain, result.sequence))

        await self.services.files.deliver(session.run_id, list(ids), send)

    async def apply(
        self,
        session: RunSession,
        result: NormalizedResult,
        outcome: RunOutcome,
        on_result: OnResult | None,
    ) -> None:
        """Record an accepted result whole, then show it to ``on_result``.

        The recording is shielded: a cancel or the run's deadline that comes while it
        writes takes effect right after it, so the ledger, the state and the
        transcript never keep half of a result (and a result accepted before the
        deadline is never lost to it). ``on_result`` is not shielded."""
        with anyio.CancelScope(shield=True):
            await self._record(session, result, outcome)
        if on_result is not None:
            maybe = on_result(result)
            if maybe is not None:
                await maybe

    async def _record(
        self, session: RunSession, result: NormalizedResult, outcome: RunOutcome
    ) -> None:
        metadata: dict[str, Any] = {}
        if result.truncated is not None:
            metadata["truncated"] = result.truncated.to_dict()
        if result.duplicate:
            metadata["duplicate_final_message"] = True
        data = result.data
        if result.type == "state.updated":
            metadata.update(await self._update_state(session, result.data))
        elif result.type == "action.requested":
            metadata.update(await self._act(session, data))
        elif result.type == ARTIFACT_CREATED:
            metadata.update(await self._keep_artifact(session, data))
            data = {k: v for k, v in data.items() if k != "content_base64"}  # kept once
        self.services.registry.record_event(
            session,
            sequence=result.sequence,
            kind=result.type,
            data=data,
            usage=result.usage,
            metadata=metadata,
        )
        if result.message is not None and session.scope.conversation_id is not None:
            await self.remember(session, result.text or "", result.data.get("message"))
        outcome.results.append(result)

    async def _act(self, session: RunSession, data: dict[str, Any]) -> dict[str, Any]:
        """Execute an ``action.requested`` when policy allows (Protocol v1)."""
        done = await self.actions.execute(session, data)
        if done and self.services.audit is not None:
            executed = bool(done.get("action_executed"))
            self.services.audit.record(
                session.run_id,
                "action.executed" if executed else "action.not_executed",
                action=str(data.get("action")),
                code=done.get("action_error_code"),
                detail={"reason": done.get("action_not_executed")} if not executed else None,
            )
        return done

    async def _keep_artifact(self, session: RunSession, data: dict[str, Any]) -> dict[str, Any]:
        """Store an ``artifact.created`` (Protocol v1); its id, or why it was refused."""
        store = self.services.artifacts
        if store is None:
            return {"artifact_rejected": "this host keeps no artifacts"}
        try:
            kept = await store.create(session.scope, session.run_id, data)
        except RPCError as exc:
            return {"artifact_rejected": exc.message, "artifact_error_code": exc.code}
        return {"artifact_id": kept.artifact_id, "sha256": kept.sha256}

    async def _update_state(self, session: RunSession, data: dict[str, Any]) -> dict[str, Any]:
        scope = str(data.get("scope"))
        key = session.state_key(scope) if scope in session.grants.state_scopes else None
        if key is None:
            return {"state_rejected": f'scope "{scope}" is not available to this run'}
        try:
            await self.services.set_state(
                session, key, scope, str(data.get("key")), data.get("value")
            )
        except RPCError as exc:
            return {"state_rejected": exc.message, "state_error_code": exc.code}
        return {}

    async def remember(self, session: RunSession, text: str, message: Any) -> None:
        await self.services.transcript.append(
            session.scope,
            role="assistant",
            content=text,
            content_json=dict(message) if isinstance(message, Mapping) else None,
            run_id=session.run_id,
            runner_id=session.runner_id,
            metadata={"run_id": session.run_id, "runner_id": session.runner_id},
        )
