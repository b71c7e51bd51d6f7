"""The host's side of a run's Box calls, over a real Box runtime.

:class:`RunBoxService` answers ``get_box_status``, ``list_boxes``, ``acquire_box``,
``bind_box`` and ``import_box_attachments`` for the runs of a
:class:`~langbot_plugin.host.services.RunServices`, and runs a run's sandbox tools
(:mod:`langbot_plugin.host.sandbox_tools`) in the Box it bound, through a
:class:`SandboxClient` (``box_runtime.client.BoxClient``; the host layer does not
import the Box runtime). The host owns the Box scope (seed 000): a run's Box is its
conversation's session, and a ``reuse_key`` names a Box within that scope, never
beyond; ``options`` may set ``image`` only. A run binds one Box, once, acquired in its
own scope. Attachments go to ``/workspace/inbox/<run id>-<ref>/``, the released host's
layout (docs/agent-runner.md).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import anyio

from langbot_plugin.api.entities.builtin.agent_runner.box import (
    BoxBinding,
    BoxFile,
    BoxSession,
    BoxStatus,
)
from langbot_plugin.host.artifact_mounts import ArtifactTrees
from langbot_plugin.host.errors import ResourceNotGrantedError
from langbot_plugin.host.registry import RunSession
from langbot_plugin.host.sandbox_tools import EXEC_TOOL, ExecClient, exec_answer, exec_spec
from langbot_plugin.host.services import RunServices
from langbot_plugin.protocol.host_api import artifacts as art
from langbot_plugin.protocol.host_api import box
from langbot_plugin.protocol.host_api.common import RunScopedParams
from langbot_plugin.protocol.spec import ActionTable
from langbot_plugin.rpc import RequestContext
from langbot_plugin.rpc.errors import InvalidParamsError, NotSupportedError

__all__ = ["RunBoxService", "SandboxClient", "ScopeId"]

#: Where imported input files go in a Box (the released host's inbox).
INBOX = "/workspace/inbox"


class _Answer(Protocol):
    def model_dump(self, *, mode: str = ...) -> dict[str, Any]: ...


class SandboxClient(ExecClient, Protocol):
    """What the host needs of a Box client (``box_runtime.client.BoxClient``)."""

    async def status(self) -> _Answer: ...
    async def create_session(
        self, spec: Mapping[str, Any] | None = None, **fields: Any
    ) -> _Answer: ...
    async def write_files(
        self, session_id: str, directory: str, files: Sequence[tuple[str, bytes]]
    ) -> list[str]: ...


#: Session id of a host scope: ``scope_id(target_type=..., target_id=..., workspace_id=...)``.
ScopeId = Callable[..., str]


class RunBoxService:
    """See the module docstring."""

    def __init__(
        self,
        client: SandboxClient,
        services: RunServices,
        *,
        scope_id: ScopeId,
        image: str | None = None,
        artifact_root: str | os.PathLike[str] | None = None,
    ) -> None:
        #: The runs' artifacts laid out for content-addressed mounts (``artifact_mount``),
        #: when the host has a root the Box allows.
        self.trees = ArtifactTrees(artifact_root) if artifact_root is not None else None
        self.client = client
        self.services = services
        self.scope_id = scope_id
        self.image = image
        #: Box id -> the session options it was created with, per acquired scope.
        self._acquired: dict[str, dict[str, Any]] = {}
        #: run id -> the Box it bound.
        self.bound: dict[str, str] = {}
        #: run id -> its input files already in its Box, by ref.
        self._imported: dict[str, dict[str, BoxFile]] = {}
        self._import_locks: dict[str, anyio.Lock] = {}

    def register(self, table: ActionTable) -> None:
        table.add(box.GET_BOX_STATUS, self.get_box_status)
        table.add(box.LIST_BOXES, self.list_boxes)
        table.add(box.ACQUIRE_BOX, self.acquire_box)
        table.add(box.BIND_BOX, self.bind_box)
        table.add(box.IMPORT_BOX_ATTACHMENTS, self.import_box_attachments)
        table.add(art.ARTIFACT_MOUNT, self.artifact_mount)

    # ------------------------------------------------------------------ scope

    def _run(self, p: RunScopedParams, ctx: RequestContext) -> RunSession:
        if not p.run_id:
            raise InvalidParamsError(
                f"{ctx.request.action} needs a run: the Box scope is the run's conversation"
            )
        return self.services.session(p.run_id, ctx, box.BIND_BOX)

    def box_of(self, session: RunSession) -> str:
        """The Box id of the run's host-owned scope."""
        scope = session.scope
        if not scope.conversation_id:
            raise InvalidParamsError("this run has no conversation, so no Box scope")
        return self.scope_id(
            target_type="conversation",
            target_id=scope.conversation_id,
            workspace_id=scope.workspace_id,
            bot_id=scope.bot_id,
            thread_id=scope.thread_id,
        )

    def _audit(
        self,
        run_id: str,
        what: str,
        box_id: str,
        detail: dict[str, Any],
        *,
        duration_ms: float | None = None,
    ) -> None:
        """Name the Box session (and what ran in it) in the run's audit: ``kind: box``."""
        audit = self.services.audit
        if audit is not None:
            audit.record(
                run_id,
                "box",
                action=f"box.{what}",
                resource=box_id,
                duration_ms=duration_ms,
                detail=detail,
            )

    # ------------------------------------------------------------------ actions

    async def get_box_status(self, p: RunScopedParams, ctx: RequestContext) -> BoxStatus:
        if p.run_id:
            self._run(p, ctx)
        raw = (await self.client.status()).model_dump(mode="json")
        backend, capacity = raw.get("backend") or {}, raw.get("capacity") or {}
        return BoxStatus(
            available=bool(backend.get("available")),
            enabled=True,
            limit=capacity.get("limit"),
            used=capacity.get("used"),
            remaining=capacity.get("remaining"),
            reason=backend.get("reason"),
        )

    async def list_boxes(self, p: RunScopedParams, ctx: RequestContext) -> box.BoxList:
        session = self._run(p, ctx)
        mine = self.box_of(session)
        items = [BoxSession(id=mine, status="ready")] if mine in self._acquired else []
        return box.BoxList(items=items)

    async def acquire_box(self, p: box.AcquireBoxParams, ctx: RequestContext) -> BoxSession:
        session = self._run(p, ctx)
        unknown = set(p.options) - {"image"}
        if unknown:
            raise InvalidParamsError(
                f"only the Box image can be chosen; limits are the host's (got {sorted(unknown)})"
            )
        box_id = self.box_of(session)
        spec: dict[str, Any] = {"session_id": box_id}
        image = p.options.get("image") or self.image
        if image:
            spec["image"] = image
        await self.client.create_session(spec)
        self._acquired[box_id] = spec
        return BoxSession(id=box_id, status="ready")

    async def bind_box(self, p: box.BindBoxParams, ctx: RequestContext) -> BoxBinding:
        session = self._run(p, ctx)
        current = self.bound.get(session.run_id)
        if current is not None and current != p.box_id:
            raise InvalidParamsError(
                "a run cannot change its Box after binding", details={"bound": current}
            )
        if p.box_id != self.box_of(session) or p.box_id not in self._acquired:
            raise ResourceNotGrantedError(
                f"Box {p.box_id} is not a Box of this run's scope (acquire it first)",
                details={"kind": "box", "resource": p.box_id, "run_id": session.run_id},
            )
        self.bind_run(session.run_id, p.box_id)  # acquired already
        return BoxBinding(box_id=p.box_id, outbox=f"/workspace/outbox/{session.run_id}")

    def bind_run(self, run_id: str, box_id: str) -> None:
        """Bind a run to ``box_id`` without the runner acquiring it: the harness and
        ``lbp dev --box`` give every run their one Box session (their ``scope_id``
        names it for every conversation, so a runner's own ``acquire_box`` and
        ``bind_box`` find the same Box). The Box creates the session on first use."""
        self._acquired.setdefault(box_id, {"session_id": box_id})
        self.bound[run_id] = box_id
        self.services.files.bind(run_id, box_id)  # export_box_files reads it
        self._audit(run_id, "bind", box_id, {"session_id": box_id})

    async def import_box_attachments(
        self, p: box.ImportBoxAttachmentsParams, ctx: RequestContext
    ) -> box.BoxFiles:
        session = self._run(p, ctx)
        run_id = session.run_id
        box_id = self._bound(run_id, "importing attachments")
        available = self.services.attachments.of_run(run_id)
        refs = list(available) if p.attachment_ids is None else list(p.attachment_ids)
        unknown = [ref for ref in refs if ref not in available]
        if unknown:
            raise InvalidParamsError(
                "unknown input attachment reference", details={"unknown": unknown}
            )
        if len(set(refs)) != len(refs):
            raise InvalidParamsError("duplicate input attachment reference")
        imported = self._imported.setdefault(run_id, {})
        async with self._import_locks.setdefault(run_id, anyio.Lock()):
            for ref in refs:
                if ref in imported:
                    continue
                file = available[ref]
                directory = f"{INBOX}/{run_id}-{ref}"
                (path,) = await self.client.write_files(box_id, directory, [(file.name, file.data)])
                imported[ref] = BoxFile(
                    id=ref,
                    name=file.name,
                    type=file.type.capitalize(),
                    size=len(file.data),
                    path=path,
                )
        return box.BoxFiles(items=[imported[ref] for ref in refs])

    async def artifact_mount(
        self, p: art.ArtifactRefParams, ctx: RequestContext
    ) -> art.ArtifactMount:
        """Show one of the conversation's artifacts to the run's commands, read-only, by
        content address (:mod:`langbot_plugin.host.artifact_mounts`)."""
        session = self.services.session(p.run_id, ctx, art.ARTIFACT_MOUNT)
        self._run(p, ctx)  # and the Box API
        store = self.services.artifacts
        if self.trees is None or store is None:
            raise NotSupportedError(
                "this host mounts no artifacts (its Box service has no artifact root)"
            )
        box_id = self._bound(session.run_id, "mounting artifacts")
        found, content = await store.content(session.scope, p.artifact_id)
        mounted = await self.trees.mount(session.run_id, found, content)
        detail = {"artifact_id": p.artifact_id, "content_digest": mounted.content_digest}
        self._audit(session.run_id, "artifact_mount", box_id, detail)
        return mounted

    def _bound(self, run_id: str, doing: str) -> str:
        box_id = self.bound.get(run_id)
        if box_id is None:
            raise InvalidParamsError(f"the runner must bind a Box before {doing}")
        return box_id

    def release(self, run_id: str) -> None:
        """Forget what the service kept for a run that ended (its binding, imported
        attachments and artifact mounts); the Box itself stays with its scope."""
        self.bound.pop(run_id, None)
        self._imported.pop(run_id, None)
        self._import_locks.pop(run_id, None)
        if self.trees is not None:
            self.trees.release(run_id)

    # ------------------------------------------------------------------ sandbox tools

    async def call_tool(self, run_id: str, tool_name: str, parameters: dict[str, Any]) -> Any:
        """Run a sandbox tool of a run (already authorized for it) in its bound Box."""
        box_id = self._bound(run_id, "using sandbox tools")
        if tool_name != EXEC_TOOL:
            raise InvalidParamsError(f"no sandbox tool {tool_name!r}")
        base = self._acquired[box_id]
        artifacts = self.trees.of_run(run_id) if self.trees is not None else []
        if artifacts:
            base = {**base, "extra_mounts": [*(base.get("extra_mounts") or []), *artifacts]}
        result = (await self.client.exec(exec_spec(parameters, box_id, base))).model_dump(
            mode="json"
        )
        self._audit(
            run_id,
            "exec",
            box_id,
            {
                "session_id": box_id,
                "command": str(parameters.get("command"))[:1024],
                "exit_code": result.get("exit_code"),
                "status": result.get("status"),
                "stdout_bytes": result.get("stdout_bytes"),
                "stderr_bytes": result.get("stderr_bytes"),
                # the skill revisions and artifacts the command saw (content-addressed)
                "skills": _skill_revisions(self._acquired[box_id]),
                "artifacts": [m["content_digest"] for m in artifacts],
            },
            duration_ms=result.get("duration_ms"),
        )
        return exec_answer(result)


def _skill_revisions(spec: Mapping[str, Any]) -> list[str]:
    """The content digests (skill revisions) a session spec mounts."""
    mounts: list[Any] = list(spec.get("extra_mounts") or [])
    return [
        str(m["content_digest"]) for m in mounts if isinstance(m, dict) and m.get("content_digest")
    ]
