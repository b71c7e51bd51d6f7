"""The Box runtime: configuration, backend choice, the session table and its reaper.

:class:`BoxRuntime` is transport-agnostic (the RPC handlers live in
:mod:`box_runtime.service`); its rules (create on demand, one command at a time per
session, capacity, expiry, recreating a vanished sandbox, managed processes, the warm
pool) are docs/box.md's *Sessions and operations*.

Two hooks serve an embedder (``langbot_plugin.box.runtime``): ``selector`` replaces the
configured backend choice, and ``mounts_checked_by_caller`` lets a caller that checked
its host paths itself mount any path outside the deny list while no mount roots are
configured.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import os
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio

from box_runtime import quota_watch
from box_runtime.admission import Admission, admitted_spec, canonical_workspace
from box_runtime.artifacts import ArtifactSource, check_sources
from box_runtime.audit import BoxAudit
from box_runtime.backends import BackendFactory, Selection, default_factories, select_backend
from box_runtime.backends.base import ExecOutcome, ExecRequest, SandboxBackend, SandboxPlan
from box_runtime.backends.host_policy import check_host_backend
from box_runtime.config import BoxConfig
from box_runtime.errors import (
    BoxAdmissionError,
    BoxBackendUnavailableError,
    BoxCapacityExceededError,
    BoxError,
    BoxSandboxGoneError,
    BoxSessionConflictError,
    BoxSessionNotFoundError,
    BoxValidationError,
)
from box_runtime.managed_process import ManagedProcess
from box_runtime.models import BoxExecutionResult, BoxExecutionStatus, BoxSessionInfo, BoxSpec
from box_runtime.pool import WarmPool, adopt_plan, adoptable
from box_runtime.pool_models import PoolStatus
from box_runtime.process_models import ManagedProcessSpec
from box_runtime.processes import ProcessTable
from box_runtime.protocol import BackendInfo
from box_runtime.quota import filesystem_quota_unavailable
from box_runtime.scope import placement_session_id, workspace_namespace
from box_runtime.security import check_env, passthrough_env
from box_runtime.session_dirs import remove_session_dir, sweep
from box_runtime.sessions import (
    SKILLS_DIR,
    QuotaMode,
    Session,
    SessionKey,
    Tenant,
    assert_compatible,
    default_image,
    deleted_error,
    make_plan,
    resolve_spec,
)
from box_runtime.settings import Settings
from box_runtime.task_groups import single_error
from langbot_plugin.rpc.failures import log_failure

__all__ = ["BoxRuntime", "warn_missing_image"]


logger = logging.getLogger("box_runtime")
_MIB = 1024 * 1024
#: The session id of the pool's template requests (valid under ``strict_ids`` too).
_TEMPLATE_ID = "lb-box-" + "0" * 64


async def warn_missing_image(backend: SandboxBackend, config: BoxConfig) -> None:
    """Say when the backend is chosen that its engine lacks the sandbox image (what
    ``/readyz`` answers 503 for), not only when the first session fails."""
    if not backend.custom_images:
        return
    try:
        problem = await backend.image_problem(default_image(config))
    except Exception as exc:  # the probe said usable; a log line must not stop the Box
        problem = f"the sandbox image could not be checked: {exc}"
    if problem is not None:
        logger.warning("Box: %s (until then /readyz answers 503)", problem)


class BoxRuntime:
    """Sessions on one backend. Use ``async with runtime.running():`` to run the reaper."""

    def __init__(
        self,
        *,
        config: Mapping[str, Any] | None = None,
        factories: Mapping[str, BackendFactory] | None = None,
        environ: Mapping[str, str] | None = None,
        cwd: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        selector: Callable[[BoxConfig], Awaitable[Selection]] | None = None,
        mounts_checked_by_caller: bool = False,
        backend: str | None = None,
    ) -> None:
        self.settings = Settings(
            config=config,
            environ=os.environ if environ is None else environ,
            cwd=cwd or os.getcwd(),
            backend=backend,
        )
        self._clock = clock
        self._factories = dict(default_factories() if factories is None else factories)
        self._selector = selector
        self._mounts_checked_by_caller = mounts_checked_by_caller
        self._sessions: dict[SessionKey, Session] = {}
        self._creating: dict[SessionKey, anyio.Event] = {}
        self._selection: Selection | None = None
        self._selection_stale = False
        self._backend_lock = anyio.Lock()
        self._orphans_cleaned = False
        #: The pool may fill once this deployment's leftovers are gone.
        self._pool_ready = False
        #: Why a quota filesystem cannot be made ("" when it can; None: not probed yet).
        self._fs_quota_reason: str | None = None
        self.admission = Admission(self.config)
        #: what sessions did (box_runtime.audit; ``box_get_audit``)
        self.audit = BoxAudit()
        self.processes = ProcessTable(lambda: self.config.limits)
        self.pool = WarmPool(
            backend=self.backend,
            planner=lambda spec, key: self._plan(
                spec, key, self.config.local.workspace_quota_enforcement
            ),
            templates=self._pool_templates,
            concurrency=lambda: self.config.pool.refill_concurrency,
        )

    # ------------------------------------------------------------------ configuration

    @property
    def config(self) -> BoxConfig:
        return self.settings.config

    @property
    def initialized(self) -> anyio.Event:
        return self.settings.initialized

    @property
    def default_workspace(self) -> str | None:
        return self.settings.default_workspace

    async def configure(self, update: Mapping[str, Any]) -> None:
        """Deep-merge ``update`` (a ``box_init`` payload), validate it and apply it."""
        self.apply_config(update)
        await self._backend_selection()
        self.pool.reconfigure()

    def apply_config(self, update: Mapping[str, Any]) -> None:
        """:meth:`configure` without its wait: a changed backend is chosen on next use."""
        preview = self.settings.preview(update)
        self.admission.check(preview)  # before anything changes
        if preview.backend == "host":
            check_host_backend(preview, self.settings.listen_host)
        if self.settings.apply(update):
            self._selection_stale = True
        self.admission.apply(self.config)
        self.settings.initialized.set()

    # ------------------------------------------------------------------ backend

    async def _backend_selection(self) -> Selection:
        async with self._backend_lock:
            selection = self._selection
            if selection is None or (self._selection_stale and not self._sessions):
                if selection is not None and selection.backend is not None:
                    await self.pool.drain()
                    await selection.backend.aclose()
                if self._selector is not None:
                    selection = await self._selector(self.config)
                else:
                    selection = await select_backend(
                        self.config, self._factories, listen_host=self.settings.listen_host
                    )
                self._selection, self._selection_stale = selection, False
                if selection.backend is None:
                    logger.warning("Box: %s", selection.describe())
                else:
                    logger.info("Box: %s", selection.describe())
                    if selection.backend.unsandboxed_warning:
                        logger.warning("Box: WARNING: %s", selection.backend.unsandboxed_warning)
                    await warn_missing_image(selection.backend, self.config)
                    self.settings.protect(selection.backend.protected_paths())
                    self.pool.wake()  # its templates depend on the backend
            if selection.backend is not None and not self._orphans_cleaned:
                self._orphans_cleaned = True
                await self._cleanup_orphans(selection.backend)
                # Only now: the cleanup removes every non-persistent sandbox of this
                # deployment, and would take warm ones made meanwhile with it.
                self._pool_ready = True
                self.pool.wake()
            return selection

    async def _cleanup_orphans(self, backend: SandboxBackend) -> None:
        """This deployment's leftovers of an earlier run: sandboxes, then their directories."""
        deployment = self.settings.deployment_id
        try:
            removed = await backend.cleanup_orphans(deployment)
        except Exception as exc:
            logger.warning("Box: orphan cleanup failed: %s", exc)
        else:
            if removed:
                logger.info("Box: removed %d orphaned sandbox(es)", len(removed))
        sessions_root = os.path.join(self.settings.state_dir, "sessions")
        try:
            swept = await anyio.to_thread.run_sync(sweep, sessions_root, deployment)
        except Exception as exc:
            logger.warning("Box: removing leftover session directories failed: %s", exc)
        else:
            if swept:
                logger.info("Box: removed %d leftover session directories", len(swept))

    @property
    def clock(self) -> Callable[[], float]:
        """The monotonic clock sessions are timed with (a fake one in tests)."""
        return self._clock

    @property
    def current_backend(self) -> SandboxBackend | None:
        """The backend selected so far (``None`` before the first selection)."""
        return self._selection.backend if self._selection is not None else None

    def pool_status(self) -> PoolStatus:
        """What the warm pool holds against what ``box.pool`` asks for."""
        config = self.config
        return self.pool.status(
            config.local.profile, config.pool.size + sum(config.pool.images.values())
        )

    async def backend(self) -> SandboxBackend:
        selection = await self._backend_selection()
        if selection.backend is None:
            raise BoxBackendUnavailableError(f"no usable sandbox backend: {selection.reason}")
        return selection.backend

    async def backend_info(self) -> BackendInfo:
        selection = await self._backend_selection()
        backend = selection.backend
        chosen = BackendInfo(
            name=None,
            available=False,
            reason=selection.reason,
            requested=selection.requested,
            skipped=dict(selection.reasons),
        )
        if backend is None:
            return chosen
        try:
            reason = await backend.probe()
        except Exception as exc:
            reason = f"probe failed: {exc}"
        if reason is not None and not self._sessions:
            self._selection_stale = True  # try the candidates again next time
        if reason is None:
            try:
                reason = await backend.service_problem()
            except Exception as exc:  # readiness answers, whatever the check raised
                reason = f"service check failed: {exc}"
        if reason is None and backend.custom_images:
            reason = await backend.image_problem(default_image(self.config))
        warning = backend.unsandboxed_warning
        return chosen.model_copy(
            update={
                "name": backend.name,
                "available": reason is None,
                "reason": reason,
                "unsafe_direct_execution": warning is not None,
                "warning": warning,
            }
        )

    # ------------------------------------------------------------------ sessions

    def _key(self, session_id: str, tenant: Tenant | None) -> SessionKey:
        return SessionKey(tenant, session_id.strip())

    def sessions(self, tenant: Tenant | None) -> list[Session]:
        return [s for key, s in self._sessions.items() if key.tenant == tenant]

    def count(self) -> int:
        return len(self._sessions) + len(self._creating)

    def session_info(self, session: Session) -> BoxSessionInfo:
        info = session.info()
        info.managed_process_count = sum(
            1 for p in self.processes.in_session(session.key) if p.running
        )
        return info

    def get_session(self, session_id: str, tenant: Tenant | None) -> BoxSessionInfo:
        session = self._sessions.get(self._key(session_id, tenant))
        if session is None:
            raise BoxSessionNotFoundError(f"session {session_id} not found")
        return self.session_info(session)

    async def _resolve(self, spec: BoxSpec, tenant: Tenant | None) -> BoxSpec:
        """The request with the profile applied, then (managed mode) the admission policy.

        Before any ``box_init``, a request whose image the engine does not have (nor can
        pull) fails at once with that reason rather than after the wait for one."""
        if self.settings.awaiting_init:
            backend = await self.backend()
            if backend.custom_images:
                image = spec.image or default_image(self.config)
                problem = await backend.image_problem(image, pull=True)
                if problem is not None:
                    raise BoxValidationError(problem)
        config = await self.settings.ready()
        backend = await self.backend()
        resolved = resolve_spec(spec, config, custom_images=backend.custom_images)
        if not self.admission.required:
            return resolved
        if tenant is None:
            raise BoxAdmissionError("a managed sandbox needs the request's workspace context")
        namespace = workspace_namespace(tenant.instance_uuid, tenant.workspace_uuid)
        workspace = await anyio.to_thread.run_sync(
            canonical_workspace, self.settings.default_workspace, namespace
        )
        return admitted_spec(resolved, self.admission.policy, workspace)

    async def drop_workspace_sessions(
        self, instance_uuid: str, workspace_uuid: str, *, keep: str | None = None
    ) -> None:
        """Remove a workspace's sessions (of every generation), except ``keep``."""
        doomed = [
            s
            for key, s in self._sessions.items()
            if key.tenant is not None
            and (key.tenant.instance_uuid, key.tenant.workspace_uuid)
            == (instance_uuid, workspace_uuid)
            and key.session_id != keep
        ]
        await self._remove_all(doomed, keep_persistent=False, reason="workspace dropped")

    async def create_session(self, spec: BoxSpec, tenant: Tenant | None) -> BoxSessionInfo:
        resolved = await self._resolve(spec, tenant)
        sources = await self._artifact_sources(resolved)
        session = await self._get_or_create(resolved, self._key(resolved.session_id, tenant))
        await session.artifacts.verify(sources)  # a bad one is refused here, not later
        # What a managed process started from now on sees.
        session.artifact_sources = sources
        return self.session_info(session)

    async def _artifact_sources(self, spec: BoxSpec) -> tuple[ArtifactSource, ...]:
        """The request's content-addressed mounts, their sources checked (per command)."""
        if not any(mount.content_addressed for mount in spec.extra_mounts):
            return ()
        backend = await self.backend()
        return await anyio.to_thread.run_sync(
            lambda: check_sources(
                spec.extra_mounts,
                self.settings.allowed_roots,
                extra_denied=backend.protected_paths(),
                skills_root=self.settings.skills_root,
            )
        )

    async def _get_or_create(self, spec: BoxSpec, key: SessionKey) -> Session:
        while True:
            session = self._sessions.get(key)
            if session is not None:
                if session.closing:
                    await session.closed.wait()
                    continue
                assert_compatible(session.spec, spec)
                session.touch(self._clock())
                return session
            pending = self._creating.get(key)
            if pending is not None:
                await pending.wait()
                continue
            limit = self.config.limits.max_sessions
            if self.count() >= limit:
                raise BoxCapacityExceededError(
                    f"Box session capacity reached ({limit} sessions)",
                    details={"quota": "max_sessions", "limit": limit, "actual": self.count()},
                )
            done = anyio.Event()
            self._creating[key] = done
            try:
                session = await self._create(spec, key)
                self._sessions[key] = session
                self._audit_created(session)
                return session
            finally:
                del self._creating[key]
                done.set()

    def _audit_created(self, session: Session) -> None:
        spec = session.spec
        self.audit.record(
            "session.create", session.key, backend=session.backend_name, image=spec.image
        )
        skills = f"{spec.mount_path.rstrip('/')}/{SKILLS_DIR}/"
        self.audit.mounted(
            session.key,
            (m.mount_path for m in spec.extra_mounts if m.mount_path.startswith(skills)),
            backend=session.backend_name,
        )

    async def _plan(
        self, spec: BoxSpec, key: SessionKey, quota_mode: QuotaMode
    ) -> tuple[SandboxPlan, str]:
        backend = await self.backend()
        if self._fs_quota_reason is None:
            reason = await anyio.to_thread.run_sync(filesystem_quota_unavailable)
            self._fs_quota_reason = reason or ""
        return await anyio.to_thread.run_sync(
            lambda: make_plan(
                spec,
                key,
                sessions_root=os.path.join(self.settings.state_dir, "sessions"),
                deployment_id=self.settings.deployment_id,
                allowed_roots=self._mount_roots(),
                extra_denied=backend.protected_paths(),
                quota_mode=quota_mode,
                filesystem_quota_unavailable=self._fs_quota_reason or None,
                # A managed session's host_path is the runtime's canonical workspace.
                host_path_owned=self.admission.required,
                skills_root=self.settings.skills_root,
                artifact_view=backend.artifact_view,
            )
        )

    def _mount_roots(self) -> list[str]:
        roots = self.settings.allowed_roots
        if not roots and self._mounts_checked_by_caller:
            return ["/"]  # the deny list still applies (check_mount)
        return roots

    def _pool_templates(self) -> list[tuple[BoxSpec, int]]:
        """The warm sandboxes ``box.pool`` asks for, as resolved requests and counts."""
        backend = self.current_backend
        pool = self.config.pool
        if backend is None or not self._pool_ready:
            return []
        wanted = [(BoxSpec(session_id=_TEMPLATE_ID), pool.size)]
        wanted += [(BoxSpec(session_id=_TEMPLATE_ID, image=i), n) for i, n in pool.images.items()]
        resolved = [
            (resolve_spec(spec, self.config, custom_images=backend.custom_images), count)
            for spec, count in wanted
            if count > 0
        ]
        return [(spec, count) for spec, count in resolved if adoptable(spec)]

    async def _create(self, spec: BoxSpec, key: SessionKey) -> Session:
        backend = await self.backend()
        warm = self.pool.take(spec, backend)
        if warm is not None:
            plan, handle, workspace = adopt_plan(warm, key), warm.handle, warm.workspace
            logger.info("Box: session %s adopted warm sandbox %s", key.session_id, handle[:24])
        else:
            plan, handle, workspace = await self._start_new(spec, key, backend)
        now = dt.datetime.now(dt.UTC)
        return Session(
            key=key,
            spec=spec,
            plan=plan,
            handle=handle,
            backend_name=backend.name,
            workspace_dir=workspace,
            created_at=now,
            last_used_at=now,
            last_used_mono=self._clock(),
        )

    async def _start_new(
        self, spec: BoxSpec, key: SessionKey, backend: SandboxBackend
    ) -> tuple[SandboxPlan, str, str]:
        quota_mode = self.config.local.workspace_quota_enforcement
        plan, workspace = await self._plan(spec, key, quota_mode)
        try:
            handle = await backend.start(plan)
            if plan.quota_enforcement == "filesystem" and not await backend.sees_host_mounts(
                plan, handle
            ):
                # The engine does not see our mounts (it lives in another mount
                # namespace): the sandbox would write beside the quota filesystem.
                if quota_mode == "filesystem":
                    raise BoxValidationError(
                        "the sandbox engine does not see the quota filesystem of this "
                        "session (box.local.workspace_quota_enforcement is 'filesystem')"
                    )
                logger.warning("Box: the engine does not see quota filesystems; watching instead")
                await backend.stop(plan, handle)
                await anyio.to_thread.run_sync(remove_session_dir, plan.session_dir)
                self._fs_quota_reason = "the sandbox engine does not see the Box's mounts"
                plan, workspace = await self._plan(spec, key, "watch")
                handle = await backend.start(plan)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(remove_session_dir, plan.session_dir)
            raise
        logger.info("Box: session %s created on %s (%s)", key.session_id, backend.name, handle[:24])
        return plan, handle, workspace

    async def delete_session(self, session_id: str, tenant: Tenant | None) -> None:
        session = self._sessions.get(self._key(session_id, tenant))
        if session is None:
            raise BoxSessionNotFoundError(f"session {session_id} not found")
        await self._remove(session, keep_persistent=False)

    async def _remove(
        self, session: Session, *, keep_persistent: bool, reason: str = "deleted"
    ) -> None:
        if session.closing:
            await session.closed.wait()
            return
        session.closing = True
        try:
            with anyio.CancelScope(shield=True):
                if keep_persistent and session.spec.persistent:
                    logger.info(
                        "Box: leaving persistent session %s running", session.key.session_id
                    )
                    return
                if session.running is not None:
                    session.running.cancel()  # its caller gets BoxSessionDeletedError at once
                await self.processes.stop_session(session.key)
                backend = self._selection.backend if self._selection else None
                if backend is not None:
                    try:
                        await backend.stop(session.plan, session.handle)
                    except Exception as exc:
                        logger.warning("Box: removing %s failed: %s", session.handle, exc)
                await anyio.to_thread.run_sync(remove_session_dir, session.plan.session_dir)
        finally:
            if self._sessions.get(session.key) is session:
                del self._sessions[session.key]
                if not (keep_persistent and session.spec.persistent):
                    self.audit.record(
                        "session.delete", session.key, backend=session.backend_name, reason=reason
                    )
                    self.audit.forget(session.key)
            session.closed.set()

    async def retire_generations(
        self, instance_uuid: str, workspace_uuid: str, current: int
    ) -> None:
        """Remove the sessions of older placement generations of one workspace."""
        stale = [
            s
            for key, s in self._sessions.items()
            if key.tenant is not None
            and key.tenant.instance_uuid == instance_uuid
            and key.tenant.workspace_uuid == workspace_uuid
            and key.tenant.generation < current
        ]
        await self._remove_all(stale, keep_persistent=False, reason="generation retired")

    async def _remove_all(
        self, sessions: list[Session], *, keep_persistent: bool, reason: str = "deleted"
    ) -> None:
        async with anyio.create_task_group() as tg:
            for session in sessions:
                tg.start_soon(
                    lambda s=session: self._remove(
                        s, keep_persistent=keep_persistent, reason=reason
                    )
                )

    async def shutdown_sessions(self) -> None:
        """Remove every non-persistent session (persistent ones keep running)."""
        sessions = list(self._sessions.values())
        await self._remove_all(sessions, keep_persistent=True, reason="box stopping")

    async def reap_expired(self) -> int:
        """Remove idle non-persistent sessions older than the TTL; return how many."""
        ttl = self.config.sessions.ttl_sec
        if ttl <= 0:
            return 0
        now = self._clock()
        expired = [
            s
            for s in self._sessions.values()
            if not s.spec.persistent
            and not s.closing
            and s.active == 0
            and now - s.last_used_mono >= ttl
            and not any(p.running for p in self.processes.in_session(s.key))
        ]
        await self._remove_all(expired, keep_persistent=False, reason="expired")
        return len(expired)

    # ------------------------------------------------------------------ exec

    async def exec(self, spec: BoxSpec, tenant: Tenant | None) -> BoxExecutionResult:
        resolved = await self._resolve(spec, tenant)
        config = self.config
        backend = await self.backend()
        if not resolved.cmd:
            raise BoxValidationError("cmd must not be empty")
        sources = await self._artifact_sources(resolved)
        session = await self._get_or_create(resolved, self._key(resolved.session_id, tenant))
        env = {**passthrough_env(config.env_passthrough, self.settings.environ), **resolved.env}
        request = ExecRequest(
            command=resolved.cmd,
            workdir=resolved.workdir,
            env=env,
            timeout_sec=resolved.timeout_sec,
            output_limit=config.output.max_bytes,
            head_ratio=config.output.head_ratio,
        )
        audited = {"backend": backend.name, "command": resolved.cmd}
        async with session.use(self._clock, "before its command started"):
            started = time.perf_counter()
            store = session.artifacts
            artifacts = await store.acquire(sources, view=backend.artifact_view)
            self.audit.mounted(session.key, (s.digest for s in sources), backend=backend.name)
            try:
                request = dataclasses.replace(request, artifacts=artifacts)
                outcome = await self._run_command(session, backend, request)
            except BoxError as exc:
                elapsed_ms = int((time.perf_counter() - started) * 1000)
                self.audit.record(
                    "exec", session.key, **audited, duration_ms=elapsed_ms, error=exc.code
                )
                raise
            finally:
                store.release(a.hex for a in artifacts)
            duration_ms = int((time.perf_counter() - started) * 1000)
            quota = await quota_watch.report(session, max_entries=self._max_entries)
        stderr = outcome.stderr.text
        if outcome.timed_out:
            stderr += f"{'' if not stderr or stderr.endswith(chr(10)) else chr(10)}"
            stderr += f"Command timed out after {resolved.timeout_sec} seconds."
        result = BoxExecutionResult(
            session_id=resolved.session_id,
            backend_name=backend.name,
            status=BoxExecutionStatus.TIMED_OUT
            if outcome.timed_out
            else BoxExecutionStatus.COMPLETED,
            exit_code=None if outcome.timed_out else outcome.exit_code,
            stdout=outcome.stdout.text,
            stderr=stderr,
            duration_ms=duration_ms,
            stdout_truncated=outcome.stdout.truncated,
            stderr_truncated=outcome.stderr.truncated,
            stdout_bytes=outcome.stdout.total_bytes,
            stderr_bytes=outcome.stderr.total_bytes,
            workspace_quota=quota,
        )
        if quota is not None:
            result.stderr += "" if not result.stderr or result.stderr.endswith("\n") else "\n"
            result.stderr += f"[box] {quota.message}"
        self.audit.record(
            "exec",
            session.key,
            **audited,
            exit_code=result.exit_code,
            status=result.status.value,
            duration_ms=duration_ms,
            stdout_bytes=result.stdout_bytes,
            stderr_bytes=result.stderr_bytes,
        )
        return result

    @property
    def _max_entries(self) -> int:
        return self.config.limits.max_workspace_entries

    async def _run_command(
        self, session: Session, backend: SandboxBackend, request: ExecRequest
    ) -> ExecOutcome:
        """Run one command under the session's lock; a delete or the quota watcher may end it.

        Nothing is refused before the command for a full workspace: the kernel (or the
        watcher) bounds what the command can add, and a command that deletes files is
        how a session over its quota is repaired.
        """
        stopped: list[quota_watch.QuotaStop] = []

        def stop(reason: quota_watch.QuotaStop) -> None:
            stopped.append(reason)
            if session.running is not None:
                session.running.cancel()

        outcome: ExecOutcome | None = None
        with anyio.CancelScope() as running:
            session.running = running
            try:
                if session.plan.quota_enforcement == "watch":
                    outcome = await quota_watch.watched(
                        session,
                        lambda: self._exec_in(session, backend, request),
                        max_entries=self._max_entries,
                        stop=stop,
                    )
                else:
                    outcome = await self._exec_in(session, backend, request)
            finally:
                session.running = None
        # A backend may finish its command (killed) before the cancellation reaches it;
        # what counts is that this scope was cancelled (only a delete or the watcher does).
        if outcome is not None and not running.cancel_called:
            return outcome
        if stopped and not session.closing:
            raise quota_watch.exceeded_error(session, stopped[0])
        raise deleted_error(session, "while its command ran; the command was ended")

    async def _exec_in(
        self, session: Session, backend: SandboxBackend, request: ExecRequest
    ) -> ExecOutcome:
        try:
            return await backend.exec(session.plan, session.handle, request)
        except BoxSandboxGoneError:
            if session.closing:
                raise deleted_error(session, "while its command ran") from None
            logger.warning(
                "Box: the sandbox of session %s vanished; recreating it", session.key.session_id
            )
            session.handle = await backend.start(session.plan)
            return await backend.exec(session.plan, session.handle, request)

    # ------------------------------------------------------------------ explicit export

    def existing(self, session_id: str, tenant: Tenant | None) -> Session:
        """A live session that is not being removed (never created here)."""
        session = self._sessions.get(self._key(session_id, tenant))
        if session is None or session.closing:
            raise BoxSessionNotFoundError(f"session {session_id} not found")
        return session

    # ------------------------------------------------------------------ managed processes

    async def start_managed_process(
        self, session_id: str, spec: ManagedProcessSpec, tenant: Tenant | None
    ) -> tuple[ManagedProcess, bool]:
        """Start (or reuse) a managed process in an existing session: ``(process, reused)``."""
        config = await self.settings.ready()
        session = self.existing(session_id, tenant)
        backend = await self.backend()
        env = {**passthrough_env(config.env_passthrough, self.settings.environ)}
        env.update(check_env(spec.env))
        store = session.artifacts
        # The process sees the content-addressed mounts of the session's latest create.
        artifacts = await store.acquire(session.artifact_sources, view=backend.artifact_view)
        hexes = [artifact.hex for artifact in artifacts]

        async def start() -> tuple[ManagedProcess, bool]:
            return await self.processes.start(
                session,
                backend,
                spec,
                env,
                artifacts=artifacts,
                on_exit=lambda: store.release(hexes),
            )

        try:
            try:
                started = await start()
            except BoxSandboxGoneError:
                logger.warning("Box: the sandbox of session %s vanished; recreating it", session_id)
                await self.processes.stop_session(session.key)
                session.handle = await backend.start(session.plan)
                started = await start()
        except BaseException:
            store.release(hexes)
            raise
        if started[1]:  # an existing process was reused: it holds what it started with
            store.release(hexes)
        else:
            self.audit.mounted(session.key, (s.digest for s in session.artifact_sources))
            self.audit.record(
                "process.start",
                session.key,
                backend=backend.name,
                process_id=started[0].process_id,
                command=[spec.command, *spec.args],
            )
        session.touch(self._clock())
        if session.closing:
            await started[0].stop()
            raise BoxSessionNotFoundError(f"session {session_id} was deleted")
        return started

    def managed_process(
        self, session_id: str, process_id: str, tenant: Tenant | None
    ) -> ManagedProcess:
        return self.processes.get(self.existing(session_id, tenant).key, process_id)

    async def stop_managed_process(
        self, session_id: str, process_id: str, tenant: Tenant | None
    ) -> None:
        session = self.existing(session_id, tenant)
        await self.processes.stop(session.key, process_id)
        self.audit.record("process.stop", session.key, process_id=process_id)
        session.touch(self._clock())

    def relay_session(self, url_session_id: str, tenant: Tenant | None) -> Session:
        """The session a relay URL names: the id itself, or the 0.7 host's placement form."""
        sessions = [s for s in self.sessions(tenant) if not s.closing]
        for session in sessions:
            if session.key.session_id == url_session_id:
                return session
        if tenant is not None:
            matches = [
                s
                for s in sessions
                if placement_session_id(
                    tenant.instance_uuid, tenant.workspace_uuid, tenant.generation, s.key.session_id
                )
                == url_session_id
            ]
            if len(matches) == 1:
                return matches[0]
            if matches:
                raise BoxSessionConflictError(
                    f"relay session id {url_session_id} matches {len(matches)} sessions; "
                    "address the session by its own id"
                )
        raise BoxSessionNotFoundError(f"session {url_session_id} not found")

    # ------------------------------------------------------------------ lifecycle

    async def _reaper(self) -> None:
        while True:
            sessions = self.config.sessions
            interval = sessions.reaper_interval_sec
            if sessions.ttl_sec > 0:
                interval = min(interval, float(sessions.ttl_sec))
            await anyio.sleep(interval)
            try:
                for instance_uuid, workspace_uuid in self.admission.expire():
                    logger.info("Box: the admission grant of %s expired", workspace_uuid)
                    await self.drop_workspace_sessions(instance_uuid, workspace_uuid)
                await self.reap_expired()
            except Exception as exc:
                log_failure(logger, "Box: the session reaper", "a sweep", exc)

    @asynccontextmanager
    async def running(self) -> AsyncGenerator[BoxRuntime]:
        """Run the reaper; on exit remove non-persistent sessions and close the backend."""
        try:
            with single_error():
                async with anyio.create_task_group() as tg:
                    await tg.start(self.processes.serve)
                    tg.start_soon(self._reaper)
                    tg.start_soon(self.pool.serve)
                    pool = self.config.pool
                    if self.initialized.is_set() or pool.size or pool.images:
                        await self._backend_selection()  # a configured pool fills now
                    try:
                        yield self
                    finally:
                        with anyio.CancelScope(shield=True):
                            await self.processes.stop_all()
                        tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await self.aclose()

    async def aclose(self) -> None:
        await self.pool.drain()
        await self.processes.stop_all()
        await self.shutdown_sessions()
        selection = self._selection
        if selection is not None and selection.backend is not None:
            await selection.backend.aclose()
