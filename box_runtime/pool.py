"""Warm sandboxes: started, idle sandboxes that new sessions adopt instead of creating one.

``box.pool`` keeps ``size`` sandboxes for the default image and profile and, per entry
of ``images``, that many for the image; a session whose resolved request matches one
exactly and binds nothing at create time adopts it. A warm sandbox serves one session
and is removed with it. What matches, the refill, the retries and ``box_status``'s
report: docs/box.md, *Warm sandboxes*.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio

from box_runtime.artifacts import split_mounts
from box_runtime.backends.base import ExecRequest, SandboxBackend, SandboxPlan
from box_runtime.models import BoxSpec
from box_runtime.pool_models import PoolSpecStatus, PoolStatus
from box_runtime.session_dirs import remove_session_dir
from box_runtime.sessions import COMPATIBILITY_FIELDS, SessionKey
from langbot_plugin.rpc.failures import log_failure

__all__ = ["RETRY_SEC", "Warm", "WarmPool", "adopt_plan", "adoptable", "signature"]

logger = logging.getLogger("box_runtime.pool")

#: How long the pool waits before it tries again after a failed create.
RETRY_SEC = 30.0

Signature = tuple[object, ...]


def signature(spec: BoxSpec) -> Signature:
    """What a sandbox is made of: the fields a reused session must match."""
    return tuple(getattr(spec, name) for name in COMPATIBILITY_FIELDS)


def adoptable(spec: BoxSpec) -> bool:
    """A request a warm sandbox can serve: nothing in it is bound at create time
    (content-addressed mounts are not: each command brings its own)."""
    return (
        spec.host_path is None
        and not split_mounts(spec.extra_mounts)[0]
        and not spec.persistent
        and spec.workspace_quota_mb == 0
    )


@dataclass(frozen=True, slots=True)
class Warm:
    """One started, idle sandbox and what it was made for."""

    spec: BoxSpec
    plan: SandboxPlan
    handle: str
    workspace: str
    backend: SandboxBackend


Planner = Callable[[BoxSpec, SessionKey], Awaitable[tuple[SandboxPlan, str]]]


class WarmPool:
    """The idle sandboxes of one runtime, kept at the configured sizes."""

    def __init__(
        self,
        *,
        backend: Callable[[], Awaitable[SandboxBackend]],
        planner: Planner,
        templates: Callable[[], list[tuple[BoxSpec, int]]],
        concurrency: Callable[[], int],
    ) -> None:
        self._backend = backend
        self._planner = planner
        self._templates = templates
        self._concurrency = concurrency
        self._idle: dict[Signature, list[Warm]] = {}
        self._filling: dict[Signature, int] = {}
        #: Sandboxes taken out of the pool without a session (trimmed, other backend).
        self._stale: list[Warm] = []
        self._changed = anyio.Event()
        self._reconfigured = anyio.Event()
        #: The last failed create of each kind (cleared by a success of that kind).
        self._errors: dict[Signature, tuple[str, dt.datetime]] = {}
        self.adopted = 0
        self.created = 0

    # ------------------------------------------------------------------ for the runtime

    def idle_count(self) -> int:
        return sum(len(warm) for warm in self._idle.values())

    def status(self, profile: str, configured: int) -> PoolStatus:
        """What the pool holds against what the configuration asks for (``box_status``).

        ``configured``: how many sandboxes ``box.pool`` names in all (the pool works
        toward them once a backend is selected and this deployment's leftovers are gone).
        """
        specs: list[PoolSpecStatus] = []
        for spec, count in self._templates():
            key = signature(spec)
            error = self._errors.get(key)
            specs.append(
                PoolSpecStatus(
                    image=spec.image,
                    profile=profile,
                    target=count,
                    ready=len(self._idle.get(key, [])),
                    refilling=self._filling.get(key, 0),
                    last_error=error[0] if error else None,
                    last_error_at=error[1] if error else None,
                )
            )
        latest = max(self._errors.values(), key=lambda error: error[1], default=None)
        return PoolStatus(
            enabled=configured > 0,
            configured=configured,
            target=sum(item.target for item in specs),
            ready=sum(item.ready for item in specs),
            refilling=sum(item.refilling for item in specs),
            refill_concurrency=self._concurrency(),
            adopted=self.adopted,
            created=self.created,
            specs=specs,
            last_error=latest[0] if latest else None,
        )

    def wake(self) -> None:
        """The configuration changed or a sandbox was taken: look at the sizes again."""
        self._changed.set()

    def reconfigure(self) -> None:
        """The configuration changed: look again now, even while backing off a failure."""
        self._reconfigured.set()
        self.wake()

    def take(self, spec: BoxSpec, backend: SandboxBackend) -> Warm | None:
        """An idle sandbox for this resolved request, or ``None`` (create one normally)."""
        if not adoptable(spec):
            return None
        idle = self._idle.get(signature(spec))
        while idle:
            warm = idle.pop()
            if warm.backend is backend:
                self.adopted += 1
                self.wake()
                return warm
            self._stale.append(warm)  # made for another backend: the refiller removes it
            self.wake()
        return None

    async def drain(self) -> None:
        """Remove every idle sandbox (the runtime closes, or its backend changes)."""
        doomed = [warm for idle in self._idle.values() for warm in idle]
        doomed += self._stale
        self._idle.clear()
        self._stale = []
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:
                for warm in doomed:
                    tg.start_soon(_remove, warm)
        if doomed:
            logger.info("Box: removed %d warm sandbox(es)", len(doomed))

    # ------------------------------------------------------------------ the refiller

    async def serve(self) -> None:
        """Keep the pool at its sizes until cancelled (the runtime's task group runs it)."""
        while True:
            self._changed = anyio.Event()
            self._reconfigured = anyio.Event()
            failed = False
            try:
                failed = await self._refill()
            except Exception as exc:
                log_failure(logger, "Box: the warm pool", "refilling it", exc)
                failed = True
            if failed:
                with anyio.move_on_after(RETRY_SEC):
                    await self._reconfigured.wait()
            else:
                await self._changed.wait()

    async def _refill(self) -> bool:
        """Trim what is not wanted, create what is missing; True when a create failed."""
        wanted = {signature(spec): (spec, count) for spec, count in self._templates()}
        for key in [key for key in self._errors if key not in wanted]:
            del self._errors[key]  # a kind no longer asked for
        for key in list(self._idle):
            keep = wanted.get(key, (None, 0))[1]
            self._stale += self._idle[key][keep:]
            del self._idle[key][keep:]
        stale, self._stale = self._stale, []
        async with anyio.create_task_group() as tg:
            for warm in stale:
                tg.start_soon(_remove, warm)
        jobs: list[BoxSpec] = []
        for key, (spec, count) in wanted.items():
            have = len(self._idle.get(key, [])) + self._filling.get(key, 0)
            jobs.extend([spec] * max(0, count - have))
        if not jobs:
            return False
        limiter = anyio.CapacityLimiter(self._concurrency())
        failures: list[BaseException] = []

        async def fill(spec: BoxSpec) -> None:
            async with limiter:
                try:
                    await self._fill_one(spec)
                except Exception as exc:
                    failures.append(exc)
                    when = dt.datetime.now(dt.UTC)
                    self._errors[signature(spec)] = (f"{type(exc).__name__}: {exc}", when)
                else:
                    self._errors.pop(signature(spec), None)

        async with anyio.create_task_group() as tg:
            for spec in jobs:
                tg.start_soon(fill, spec)
        if failures:
            logger.warning(
                "Box: %d warm sandbox(es) could not be made (retrying in %.0f s): %s",
                len(failures),
                RETRY_SEC,
                failures[0],
            )
        return bool(failures)

    async def _fill_one(self, spec: BoxSpec) -> None:
        key = signature(spec)
        self._filling[key] = self._filling.get(key, 0) + 1
        try:
            backend = await self._backend()
            pool_key = SessionKey(None, f"pool-{secrets.token_hex(8)}")
            warm_spec = spec.model_copy(update={"session_id": pool_key.session_id})
            plan, workspace = await self._planner(warm_spec, pool_key)
            handle = ""
            try:
                handle = await backend.start(plan)
                check = ExecRequest("true", plan.mount_path, {}, 30, 1024, 0.5)
                outcome = await backend.exec(plan, handle, check)
                if outcome.exit_code != 0:
                    raise RuntimeError(
                        f"the check in a new warm sandbox exited {outcome.exit_code}"
                    )
            except BaseException:
                with anyio.CancelScope(shield=True):
                    if handle:
                        await backend.stop(plan, handle)
                    await anyio.to_thread.run_sync(remove_session_dir, plan.session_dir)
                raise
            self.created += 1
            self._idle.setdefault(key, []).append(Warm(spec, plan, handle, workspace, backend))
        finally:
            self._filling[key] -= 1


def adopt_plan(warm: Warm, key: SessionKey) -> SandboxPlan:
    """The warm sandbox's plan as the adopting session's (same sandbox, same directories)."""
    return dataclasses.replace(warm.plan, session_id=key.session_id)


async def _remove(warm: Warm) -> None:
    try:
        await warm.backend.stop(warm.plan, warm.handle)
    except Exception as exc:
        logger.warning("Box: removing warm sandbox %s failed: %s", warm.handle[:24], exc)
    await anyio.to_thread.run_sync(remove_session_dir, warm.plan.session_dir)
