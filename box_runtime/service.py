"""The Box's action handlers: one typed handler per action of :mod:`box_runtime.protocol`.

A request's ``context`` selects the tenant whose sessions it sees, within the instance
the connection is bound to, and a workspace's placement generation only moves forward
(docs/box.md, *Instance binding and tenancy*). Parameter validation errors surface as
``BoxValidationError`` (what the released host expects), not as the RPC core's generic
``invalid_params``.
"""

from __future__ import annotations

from typing import Any

import anyio

from box_runtime import protocol as p
from box_runtime.errors import (
    BoxAdmissionError,
    BoxManagedProcessConflictError,
    BoxReadinessError,
    BoxValidationError,
)
from box_runtime.export import RECORDED_FIELDS
from box_runtime.export_session import (
    read_session_files,
    remove_session_files,
    write_session_files,
)
from box_runtime.link_names import INSTANCE_ID_PATTERN
from box_runtime.managed_process import ManagedProcess
from box_runtime.metrics import BoxMetrics
from box_runtime.models import BoxExecutionResult, BoxSessionInfo, BoxSpec
from box_runtime.process_models import ManagedProcessInfo
from box_runtime.runtime import BoxRuntime
from box_runtime.sessions import Tenant
from box_runtime.skill_actions import SkillActions
from box_runtime.storage import verify_shared_workspace
from box_runtime.storage_report import analyse
from langbot_plugin.protocol.spec import ActionSpec, ActionTable, Empty, Params
from langbot_plugin.rpc import (
    InvalidParamsError,
    PermissionDeniedError,
    RequestContext,
    RPCSession,
)
from langbot_plugin.rpc.routes import Answer, CallNext, before
from langbot_plugin.rpc.tracing import trace_table

__all__ = ["ADMITTED_ACTIONS", "INSTANCE_ID_PATTERN", "BoxService", "runtime_status"]


class BoxService:
    """Serves the Box actions for any number of connections on one runtime.

    ``generations``: the placement generation last seen per ``(instance, workspace)``;
    services that share one dict share one fence (the reference's ``BoxGenerationFence``).
    """

    def __init__(
        self, runtime: BoxRuntime, *, generations: dict[tuple[str, str], int] | None = None
    ) -> None:
        self.runtime = runtime
        #: The LangBot instance each connection is bound to (``None``: not bound).
        self._peers: dict[RPCSession, str | None] = {}
        self._generations = {} if generations is None else generations
        self.skills = SkillActions(lambda: runtime.settings.skills_root, self._tenant)
        #: what ``/metrics`` answers (one registry per service)
        self.metrics = BoxMetrics(runtime, lambda: self.connections)
        self.dispatcher = self._build_dispatcher()

    # ------------------------------------------------------------------ connections

    def attach(self, session: RPCSession, instance_id: str | None) -> None:
        self._peers[session] = instance_id

    def detach(self, session: RPCSession) -> None:
        self._peers.pop(session, None)

    @property
    def connections(self) -> int:
        return len(self._peers)

    # ------------------------------------------------------------------ tenancy

    async def _tenant(self, ctx: RequestContext) -> Tenant | None:
        context = ctx.context
        if not context:
            return None
        instance, workspace, generation = self._checked_tenant(
            context.get("instance_uuid"),
            context.get("workspace_uuid"),
            context.get("placement_generation"),
            bound_instance=self._peers.get(ctx.session),
            field="context.",
        )
        await self._observe_generation(instance, workspace, generation)
        return Tenant(instance, workspace, generation)

    async def _observe_generation(self, instance: str, workspace: str, generation: int) -> None:
        """Generations only move forward; a newer one retires the older ones' sessions."""
        self._refuse_stale(instance, workspace, generation)
        key = (instance, workspace)
        current = self._generations.get(key)
        if current != generation:
            self._generations[key] = generation
            if current is not None:
                await self.runtime.retire_generations(instance, workspace, generation)

    async def _admitted(self, ctx: RequestContext) -> None:
        """Managed mode: a sandbox action needs a live grant for its workspace."""
        admission = self.runtime.admission
        if not admission.required:
            return
        tenant = await self._tenant(ctx)
        if tenant is None:
            raise BoxAdmissionError("a managed sandbox action needs the workspace context")
        grant = admission.require(tenant.instance_uuid, tenant.workspace_uuid, tenant.generation)
        if ctx.request.action == p.BOX_START_MANAGED_PROCESS.name and (
            grant.max_managed_processes <= 0
        ):
            raise BoxAdmissionError("the sandbox admission grant permits no managed process")
        backend = await self.runtime.backend()
        if backend.name != admission.policy.required_backend:
            raise BoxReadinessError(
                f"managed sandboxes need the {admission.policy.required_backend} backend "
                f"(this Box uses {backend.name})"
            )
        session_id = ctx.request.data.get("session_id")
        if ctx.request.action in _BY_SESSION_ID and session_id not in (
            None,
            admission.policy.logical_session_id,
        ):
            raise BoxAdmissionError("the managed sandbox session_id is runtime-owned")

    def _checked_tenant(
        self,
        instance: object,
        workspace: object,
        generation: object,
        *,
        bound_instance: str | None,
        field: str,
    ) -> tuple[str, str, int]:
        """Validate a tenant's three parts; refuse another instance and a stale generation."""
        if not isinstance(instance, str) or not INSTANCE_ID_PATTERN.fullmatch(instance):
            raise BoxValidationError(f"{field}instance_uuid is missing or malformed")
        if not isinstance(workspace, str) or not workspace.strip() or len(workspace) > 256:
            raise BoxValidationError(f"{field}workspace_uuid is missing or malformed")
        if isinstance(generation, bool) or not isinstance(generation, int) or generation < 1:
            raise BoxValidationError(f"{field}placement_generation must be a positive integer")
        if bound_instance is not None and instance != bound_instance:
            raise PermissionDeniedError("the request context belongs to another LangBot instance")
        self._refuse_stale(instance, workspace, generation)
        return instance, workspace, generation

    def _refuse_stale(self, instance: str, workspace: str, generation: int) -> None:
        current = self._generations.get((instance, workspace))
        if current is not None and generation < current:
            raise PermissionDeniedError(
                f"Stale Box placement generation {generation} (current {current})",
                details={"current": current, "requested": generation},
            )

    def relay_process(
        self,
        *,
        instance: str | None,
        workspace: str | None,
        generation: str | None,
        session_id: str,
        process_id: str,
    ) -> ManagedProcess:
        """The running process a relay connection asks for (headers name the tenant).

        Without workspace headers the request addresses the context-free namespace, as
        an RPC request without ``context`` does.
        """
        tenant: Tenant | None = None
        if workspace is not None or generation is not None:
            number = int(generation) if generation and generation.isdigit() else None
            checked = self._checked_tenant(
                instance, workspace, number, bound_instance=None, field="relay header "
            )
            tenant = Tenant(*checked)
        session = self.runtime.relay_session(session_id, tenant)
        process = self.runtime.processes.get(session.key, process_id)
        if not process.running:
            raise BoxManagedProcessConflictError(
                f"managed process {process_id} in session {session.key.session_id} is not running"
            )
        return process

    def _check_instance(self, ctx: RequestContext) -> None:
        """Host-control actions: a context, when present, must name the bound instance."""
        bound = self._peers.get(ctx.session)
        instance = (ctx.context or {}).get("instance_uuid")
        if bound is not None and instance is not None and instance != bound:
            raise PermissionDeniedError("the request context belongs to another LangBot instance")

    # ------------------------------------------------------------------ handlers

    async def init(self, params: Params, ctx: RequestContext) -> p.InitResult:
        self._check_instance(ctx)
        await self.runtime.configure(params.model_dump())
        return p.InitResult(initialized=True)

    async def backend_info(self, params: Empty, ctx: RequestContext) -> p.BackendInfo:
        del params
        self._check_instance(ctx)
        return await self.runtime.backend_info()

    async def status(self, params: Empty, ctx: RequestContext) -> p.BoxStatus:
        del params
        return await runtime_status(self.runtime, await self._tenant(ctx))

    async def exec(self, spec: BoxSpec, ctx: RequestContext) -> BoxExecutionResult:
        return await self.runtime.exec(spec, await self._tenant(ctx))

    async def create_session(self, spec: BoxSpec, ctx: RequestContext) -> BoxSessionInfo:
        return await self.runtime.create_session(spec, await self._tenant(ctx))

    async def get_session(self, ref: p.SessionRef, ctx: RequestContext) -> BoxSessionInfo:
        return self.runtime.get_session(ref.session_id, await self._tenant(ctx))

    async def get_sessions(self, params: Empty, ctx: RequestContext) -> p.SessionList:
        del params
        tenant = await self._tenant(ctx)
        sessions = self.runtime.sessions(tenant)
        return p.SessionList(sessions=[self.runtime.session_info(s) for s in sessions])

    async def delete_session(self, ref: p.SessionRef, ctx: RequestContext) -> p.Deleted:
        await self.runtime.delete_session(ref.session_id, await self._tenant(ctx))
        return p.Deleted(deleted=ref.session_id)

    async def storage_analysis(self, params: Empty, ctx: RequestContext) -> p.StorageAnalysis:
        del params
        sessions = self.runtime.sessions(await self._tenant(ctx))
        selection = self.runtime.current_backend
        return await analyse(
            selection, sessions, max_entries=self.runtime.config.limits.max_workspace_entries
        )

    async def read_files(
        self, request: p.ReadFilesRequest, ctx: RequestContext
    ) -> p.ReadFilesResult:
        session = self.runtime.existing(request.session_id, await self._tenant(ctx))
        batch, ledger = await read_session_files(
            await self.runtime.backend(),
            session,
            request.paths,
            run_id=request.run_id,
            clock=self.runtime.clock,
        )
        infos: list[p.ReadFileInfo] = []
        for item in batch:  # the bytes travel as __file_chunk transfers, not in the answer
            key = await ctx.session.send_file(
                item.data, context=ctx.context, chunk_bytes=EXPORT_CHUNK_BYTES
            )
            record = {name: getattr(item, name) for name in RECORDED_FIELDS}
            infos.append(p.ReadFileInfo(**record, file_key=key))
        self.runtime.audit.record(
            "files.export",
            session.key,
            run_id=request.run_id,
            paths=[item.path for item in batch],
            bytes=sum(item.size for item in batch),
        )
        return p.ReadFilesResult(
            files=infos,
            run_files=len(ledger.files) if ledger is not None else None,
            run_bytes=ledger.bytes if ledger is not None else None,
        )

    async def write_files(
        self, request: p.WriteFilesRequest, ctx: RequestContext
    ) -> p.WriteFilesResult:
        session = self.runtime.existing(request.session_id, await self._tenant(ctx))
        items: list[tuple[str, bytes]] = []
        for item in request.files:
            data = ctx.session.files.take(item.file_key)
            if len(data) != item.size:
                raise BoxValidationError(
                    f"{item.name}: {len(data)} bytes arrived, {item.size} were announced"
                )
            items.append((item.name, data))
        paths = await write_session_files(
            await self.runtime.backend(),
            session,
            request.directory,
            items,
            clock=self.runtime.clock,
        )
        self.runtime.audit.record(
            "files.write", session.key, paths=paths, bytes=sum(len(data) for _, data in items)
        )
        return p.WriteFilesResult(paths=paths)

    async def remove_files_if_match(
        self, request: p.RemoveFilesRequest, ctx: RequestContext
    ) -> p.RemoveFilesResult:
        session = self.runtime.existing(request.session_id, await self._tenant(ctx))
        outcome = await remove_session_files(
            await self.runtime.backend(),
            session,
            [(f.path, f.sha256) for f in request.files],
            clock=self.runtime.clock,
        )
        removed = [path for path, kept in outcome if kept is None]
        self.runtime.audit.record("files.remove", session.key, paths=removed)
        return p.RemoveFilesResult(
            removed=removed,
            kept=[p.KeptFile(path=path, reason=kept) for path, kept in outcome if kept],
        )

    async def shutdown(self, params: Empty, ctx: RequestContext) -> Empty:
        del params
        self._check_instance(ctx)
        await self.runtime.shutdown_sessions()
        return Empty()

    async def verify_shared_workspace(
        self, probe: p.SharedWorkspaceProbe, ctx: RequestContext
    ) -> p.SharedWorkspaceProof:
        self._check_instance(ctx)
        root = self.runtime.default_workspace
        if root is None:
            raise BoxReadinessError("no shared workspace is configured (box.local.host_root)")
        proof = await anyio.to_thread.run_sync(verify_shared_workspace, root, probe.marker_name)
        return p.SharedWorkspaceProof.model_validate(proof)

    async def start_process(
        self, params: p.ManagedProcessStart, ctx: RequestContext
    ) -> ManagedProcessInfo:
        tenant = await self._tenant(ctx)
        process, _ = await self.runtime.start_managed_process(
            params.session_id, params.spec, tenant
        )
        return process.info()

    async def get_process(
        self, ref: p.ManagedProcessRef, ctx: RequestContext
    ) -> ManagedProcessInfo:
        tenant = await self._tenant(ctx)
        return self.runtime.managed_process(ref.session_id, ref.process_id, tenant).info()

    async def stop_process(
        self, ref: p.ManagedProcessRef, ctx: RequestContext
    ) -> p.ManagedProcessStopped:
        tenant = await self._tenant(ctx)
        await self.runtime.stop_managed_process(ref.session_id, ref.process_id, tenant)
        return p.ManagedProcessStopped(stopped=ref.process_id)

    async def get_audit(self, query: p.AuditQuery, ctx: RequestContext) -> p.AuditPage:
        return self.runtime.audit.query(await self._tenant(ctx), query)

    def _check_grant_instance(self, ctx: RequestContext, instance_uuid: str) -> None:
        self._check_instance(ctx)
        bound = self._peers.get(ctx.session)
        if bound is not None and instance_uuid != bound:
            raise PermissionDeniedError("the admission grant names another LangBot instance")

    async def upsert_grant(
        self, grant: p.AdmissionGrant, ctx: RequestContext
    ) -> p.AdmissionReceipt:
        self._check_grant_instance(ctx, grant.instance_uuid)
        admission = self.runtime.admission
        receipt, drop = admission.upsert(grant)
        await self._observe_generation(
            grant.instance_uuid, grant.workspace_uuid, grant.execution_generation
        )
        await self.runtime.drop_workspace_sessions(
            grant.instance_uuid,
            grant.workspace_uuid,
            keep=None if drop else admission.policy.logical_session_id,
        )
        return receipt

    async def revoke_grant(
        self, revocation: p.AdmissionRevocation, ctx: RequestContext
    ) -> p.RevocationReceipt:
        self._check_grant_instance(ctx, revocation.instance_uuid)
        receipt = self.runtime.admission.revoke(revocation)
        await self.runtime.drop_workspace_sessions(
            revocation.instance_uuid, revocation.workspace_uuid
        )
        return receipt

    # ------------------------------------------------------------------ dispatch

    def _build_dispatcher(self) -> ActionTable:
        table = ActionTable()
        handlers: dict[ActionSpec[Any, Any], Any] = {
            p.BOX_INIT: self.init,
            p.BOX_HEALTH: self.backend_info,
            p.BOX_GET_BACKEND_INFO: self.backend_info,
            p.BOX_STATUS: self.status,
            p.BOX_EXEC: self.exec,
            p.BOX_CREATE_SESSION: self.create_session,
            p.BOX_GET_SESSION: self.get_session,
            p.BOX_GET_SESSIONS: self.get_sessions,
            p.BOX_DELETE_SESSION: self.delete_session,
            p.BOX_GET_STORAGE_ANALYSIS: self.storage_analysis,
            p.BOX_SHUTDOWN: self.shutdown,
            p.BOX_UPSERT_SANDBOX_ADMISSION_GRANT: self.upsert_grant,
            p.BOX_REVOKE_SANDBOX_ADMISSION_GRANT: self.revoke_grant,
            p.BOX_START_MANAGED_PROCESS: self.start_process,
            p.BOX_GET_MANAGED_PROCESS: self.get_process,
            p.BOX_STOP_MANAGED_PROCESS: self.stop_process,
            p.BOX_VERIFY_SHARED_WORKSPACE: self.verify_shared_workspace,
            p.BOX_READ_FILES: self.read_files,
            p.BOX_REMOVE_FILES_IF_MATCH: self.remove_files_if_match,
            p.BOX_WRITE_FILES: self.write_files,
            p.BOX_GET_AUDIT: self.get_audit,
            **self.skills.handlers(),
        }
        for spec in p.ALL_ACTIONS:
            table.add(spec, handlers[spec])  # a declared action without a handler fails here
        table.use(before(self._admitted), when=ADMITTED_ACTIONS.__contains__)
        table.use(_box_validation)
        self.metrics.requests.put_on(table, "rpc")  # outermost: refusals count too
        trace_table(table, "rpc")
        return table


async def runtime_status(runtime: BoxRuntime, tenant: Tenant | None) -> p.BoxStatus:
    """``box_status`` as ``tenant`` sees the runtime (``None``: the context-free namespace)."""
    config = runtime.config
    limits = config.limits
    used = len(runtime.sessions(tenant))
    return p.BoxStatus(
        backend=await runtime.backend_info(),
        active_sessions=used,
        managed_processes=runtime.processes.running_count(lambda key: key.tenant == tenant),
        session_ttl_sec=config.sessions.ttl_sec,
        limits={
            "max_sessions": limits.max_sessions,
            "max_managed_processes": limits.max_managed_processes,
            "max_completed_processes": limits.max_completed_processes,
            "max_admission_records": limits.max_admission_records,
            "max_rpc_file_bytes": limits.max_rpc_file_bytes,
        },
        capacity=p.Capacity(
            limit=limits.max_sessions,
            used=used,
            remaining=max(0, limits.max_sessions - runtime.count()),
        ),
        profile=config.local.profile,
        initialized=runtime.initialized.is_set(),
        pool=runtime.pool_status(),
    )


#: The sandbox actions that need a live admission grant in managed mode.
ADMITTED_ACTIONS = frozenset(
    spec.name
    for spec in (
        p.BOX_EXEC,
        p.BOX_CREATE_SESSION,
        p.BOX_GET_SESSION,
        p.BOX_GET_SESSIONS,
        p.BOX_DELETE_SESSION,
        *p.MANAGED_PROCESS_ACTIONS,
        *p.FILE_ACTIONS,
    )
)
#: Actions that address a session by its caller-visible id.
_BY_SESSION_ID = frozenset(
    spec.name
    for spec in (
        p.BOX_GET_SESSION,
        p.BOX_DELETE_SESSION,
        *p.MANAGED_PROCESS_ACTIONS,
        *p.FILE_ACTIONS,
    )
)
#: Chunk size of exported files (both ends are ours: far above the reference's 16 KiB).
EXPORT_CHUNK_BYTES = 512 * 1024


async def _box_validation(ctx: RequestContext, call_next: CallNext) -> Answer:
    """Report parameter errors as ``BoxValidationError`` (the host maps that class)."""
    try:
        return await call_next(ctx)
    except InvalidParamsError as exc:
        raise BoxValidationError(exc.message, details=exc.details) from None
