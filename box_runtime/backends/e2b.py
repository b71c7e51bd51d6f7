"""E2B backend: each session is an E2B sandbox, driven through the e2b SDK (async).

A session's sandbox comes from ``box.e2b.template`` (or the request's ``image``), with
an E2B timeout that follows the session TTL and is extended as the session is used. Its
mounts are synced with the host directories around each command (:mod:`.e2b_sync`);
commands run as background commands the Box waits for; managed processes are background
commands with stdin (:mod:`.e2b_process`); export reads inside the sandbox
(:mod:`.e2b_files`); every SDK error is mapped at one edge (:mod:`.e2b_errors`). What
it does not offer: docs/box.md, *E2B*.
"""

from __future__ import annotations

import contextlib
import logging
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self

import anyio
from e2b import AsyncSandbox, CommandExitException, SandboxQuery, SandboxState

from box_runtime.backends.base import (
    ExecOutcome,
    ExecRequest,
    ProcessRequest,
    SandboxBackend,
    SandboxPlan,
    SpawnedProcess,
)
from box_runtime.backends.e2b_errors import sdk_errors
from box_runtime.backends.e2b_files import SandboxFileOps, export, remove_if_unchanged
from box_runtime.backends.e2b_process import E2BProcess, output_sink
from box_runtime.backends.e2b_sync import Manifest, SyncLimits, pull, push
from box_runtime.config import DEFAULT_IMAGE, BoxConfig, E2BConfig
from box_runtime.errors import BoxBackendUnavailableError, BoxError, BoxSandboxGoneError
from box_runtime.export import ExportedFile, ExportLimits, SandboxFiles
from box_runtime.output import OutputCollector

__all__ = ["E2BBackend", "shell_command"]

logger = logging.getLogger("box_runtime.e2b")

#: How much longer than the Box's own timeout the SDK's stream may stay open.
_STREAM_MARGIN_SEC = 30
_KILL_WAIT_SEC = 10
#: How long ``/readyz`` reuses the answer of E2B's API.
_REACH_TTL_SEC = 10.0


def shell_command(workdir: str, command: str) -> str:
    """``command`` for ``bash -c`` in ``workdir`` (made when missing), as the other backends."""
    where = shlex.quote(workdir)
    return (
        f"cd {where} 2>/dev/null || {{ mkdir -p {where} && cd {where}; }} || exit 126; "
        f"eval {shlex.quote(command)}"
    )


@dataclass(eq=False)
class _Live:
    """One sandbox this backend created: the SDK object, the mounts' manifests."""

    sandbox: AsyncSandbox
    files: SandboxFileOps
    #: The same as root: read-only mounts are written as root, so the user cannot
    #: change them.
    root_files: SandboxFileOps
    extended_at: float
    manifests: dict[str, Manifest] = field(default_factory=dict[str, Manifest])
    sync: anyio.Lock = field(default_factory=anyio.Lock)


class E2BBackend(SandboxBackend):
    name = "e2b"
    artifact_view = True

    def __init__(
        self,
        config: E2BConfig,
        *,
        ttl_sec: int,
        default_image: str = DEFAULT_IMAGE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._config = config
        self._timeout = ttl_sec + config.timeout_grace_sec if ttl_sec > 0 else 0
        self._timeout = self._timeout or config.sandbox_timeout_sec
        self._default_image = default_image
        self._clock = clock
        self._live: dict[str, _Live] = {}
        self._reached: tuple[float, str | None] | None = None  # service_problem's answer
        self._limits = SyncLimits(config.sync_max_file_mb * 1024 * 1024, config.sync_max_files)

    @classmethod
    def from_config(cls, section: Any, config: BoxConfig) -> Self:
        """Sandboxes live as long as the sessions' TTL allows; the default image is
        ``box.local.image``'s."""
        return cls(
            section,
            ttl_sec=config.sessions.ttl_sec,
            default_image=config.local.image or DEFAULT_IMAGE,
        )

    def _opts(self) -> dict[str, Any]:
        """The SDK's connection options (empty values: the SDK's own env and defaults)."""
        config = self._config
        opts: dict[str, Any] = {"request_timeout": config.request_timeout_sec}
        if config.retries is not None:
            opts["retries"] = config.retries
        for key in ("api_key", "domain", "api_url", "sandbox_url", "http_version"):
            value = getattr(config, key)
            if value:
                opts[key] = value
        return opts

    async def probe(self) -> str | None:
        import os

        if not (self._config.api_key or os.environ.get("E2B_API_KEY")):
            return "no E2B API key (set box.e2b.api_key or E2B_API_KEY)"
        return None

    async def service_problem(self) -> str | None:
        """Whether E2B's API answers this key: one list call, its answer kept for
        :data:`_REACH_TTL_SEC` (``/readyz`` is polled)."""
        now = self._clock()
        if self._reached is not None and now - self._reached[0] < _REACH_TTL_SEC:
            return self._reached[1]
        problem: str | None = None
        try:
            with sdk_errors("list sandboxes"):
                query = SandboxQuery(metadata={"langbot.box.probe": "readyz"})
                await AsyncSandbox.list(query=query, limit=1, **self._opts()).next_items()
        except BoxError as exc:
            problem = exc.message
        self._reached = (now, problem)
        return problem

    # ------------------------------------------------------------------ lifecycle

    def _template(self, plan: SandboxPlan) -> str | None:
        if plan.image and plan.image != self._default_image:
            return plan.image
        return self._config.template or None

    async def start(self, plan: SandboxPlan) -> str:
        with sdk_errors("create sandbox"):
            sandbox = await AsyncSandbox.create(
                template=self._template(plan),
                timeout=self._timeout,
                metadata=dict(plan.labels),
                allow_internet_access=plan.network,
                **self._opts(),
            )
        timeout = self._config.request_timeout_sec
        live = _Live(
            sandbox,
            SandboxFileOps(sandbox, self._config.user, timeout),
            SandboxFileOps(sandbox, "root", timeout),
            self._clock(),
        )
        try:
            await self._prepare(live, plan)
        except BaseException:
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await self._kill(sandbox.sandbox_id)
            raise
        self._live[sandbox.sandbox_id] = live
        logger.info("Box e2b: sandbox %s for session %s", sandbox.sandbox_id, plan.session_id)
        return sandbox.sandbox_id

    async def _prepare(self, live: _Live, plan: SandboxPlan) -> None:
        """Make the mount points (as root), hand the writable ones to the user, push their
        files (a read-only mount's as root: the user can read them, not change them)."""
        user = self._config.user
        paths = " ".join(shlex.quote(m.sandbox_path) for m in plan.mounts)
        script = f'for p in {paths}; do mkdir -p -- "$p" || exit 1; done'
        writable = " ".join(shlex.quote(m.sandbox_path) for m in plan.mounts if not m.read_only)
        if user != "root" and writable:
            script += f"; chown {shlex.quote(user)}: -- {writable}"
        with sdk_errors("prepare the sandbox", live.sandbox.sandbox_id):
            try:
                await live.sandbox.commands.run(script, user="root", timeout=60)
            except CommandExitException as exc:
                raise BoxBackendUnavailableError(
                    f"E2B sandbox could not make its mount points: {exc.stderr.strip()[-300:]}"
                ) from None
        await self._push(live, plan)

    async def _kill(self, sandbox_id: str) -> None:
        with sdk_errors("kill sandbox"):
            await AsyncSandbox.kill(sandbox_id, **self._opts())

    async def stop(self, plan: SandboxPlan, handle: str) -> None:
        del plan
        self._live.pop(handle, None)
        await self._kill(handle)

    async def cleanup_orphans(self, deployment_id: str) -> list[str]:
        """Kill the non-persistent sandboxes an earlier run of this deployment left."""
        query = SandboxQuery(
            metadata={"langbot.box.deployment": deployment_id, "langbot.box.persistent": "false"},
            state=[SandboxState.RUNNING],
        )
        killed: list[str] = []
        with sdk_errors("list sandboxes"):
            paginator = AsyncSandbox.list(query=query, **self._opts())
            while paginator.has_next:
                for info in await paginator.next_items():
                    if info.sandbox_id not in self._live:
                        await self._kill(info.sandbox_id)
                        killed.append(info.sandbox_id)
        return killed

    def _get(self, handle: str) -> _Live:
        live = self._live.get(handle)
        if live is None:  # made by an earlier run of the Box: recreate it
            raise BoxSandboxGoneError(f"E2B sandbox {handle} is not one of this Box's")
        return live

    async def _extend(self, live: _Live) -> None:
        """Push the sandbox's E2B timeout out again, at most once a quarter period."""
        now = self._clock()
        if now - live.extended_at < self._timeout / 4:
            return
        with sdk_errors("extend the sandbox timeout", live.sandbox.sandbox_id):
            await live.sandbox.set_timeout(self._timeout)
        live.extended_at = now

    async def _push(self, live: _Live, plan: SandboxPlan) -> None:
        async with live.sync:
            for mount in plan.mounts:
                manifest = live.manifests.setdefault(mount.sandbox_path, Manifest())
                files = live.root_files if mount.read_only else live.files
                await push(files, mount.host_path, mount.sandbox_path, manifest, self._limits)

    async def _pull(self, live: _Live, plan: SandboxPlan) -> None:
        async with live.sync:
            for mount in plan.mounts:
                if mount.read_only:
                    continue
                manifest = live.manifests.setdefault(mount.sandbox_path, Manifest())
                await pull(live.files, mount.sandbox_path, mount.host_path, manifest, self._limits)

    def manifest(self, handle: str, sandbox_path: str) -> Manifest | None:
        """The sync manifest of one mount (for tests and diagnostics)."""
        live = self._live.get(handle)
        return live.manifests.get(sandbox_path) if live else None

    # ------------------------------------------------------------------ commands

    async def exec(self, plan: SandboxPlan, handle: str, request: ExecRequest) -> ExecOutcome:
        live = self._get(handle)
        await self._extend(live)
        await self._push(live, plan)
        stdout = OutputCollector(request.output_limit, request.head_ratio)
        stderr = OutputCollector(request.output_limit, request.head_ratio)
        sandbox = live.sandbox
        with sdk_errors("run a command", handle):
            command = await sandbox.commands.run(
                shell_command(request.workdir, request.command),
                background=True,
                envs=dict(request.env),
                user=self._config.user,
                on_stdout=lambda text: stdout.feed(text.encode()),
                on_stderr=lambda text: stderr.feed(text.encode()),
                timeout=request.timeout_sec + _STREAM_MARGIN_SEC,
                request_timeout=self._config.request_timeout_sec,
                retain_output=False,
            )
        code: int | None = None
        finished = False
        try:
            with anyio.move_on_after(request.timeout_sec):
                with sdk_errors("run a command", handle):
                    try:
                        code = (await command.wait()).exit_code
                    except CommandExitException as exc:
                        code = exc.exit_code
                finished = True
        finally:
            if not finished:
                with anyio.CancelScope(shield=True), anyio.move_on_after(_KILL_WAIT_SEC):
                    with contextlib.suppress(Exception):
                        await sandbox.commands.kill(command.pid)
                    with contextlib.suppress(Exception):
                        await command.disconnect()
        await self._pull(live, plan)
        if not finished:
            return ExecOutcome(None, True, stdout.result(), stderr.result())
        return ExecOutcome(code, False, stdout.result(), stderr.result())

    async def spawn(
        self, plan: SandboxPlan, handle: str, request: ProcessRequest
    ) -> SpawnedProcess:
        live = self._get(handle)
        await self._extend(live)
        await self._push(live, plan)
        outputs, receivers = E2BProcess.channels()
        with sdk_errors("start a managed process", handle):
            command = await live.sandbox.commands.run(
                shell_command(request.cwd, f"exec {shlex.join(request.argv)}"),
                background=True,
                stdin=True,
                envs=dict(request.env),
                user=self._config.user,
                on_stdout=output_sink(outputs[0]),
                on_stderr=output_sink(outputs[1]),
                timeout=0,
                request_timeout=self._config.request_timeout_sec,
                retain_output=False,
            )
        return E2BProcess(live.sandbox, command, outputs, receivers, self._config.user)

    # ------------------------------------------------------------------ files

    def storage_locations(
        self, plan: SandboxPlan, handle: str
    ) -> dict[str, tuple[str, tuple[str, ...]] | None]:
        del plan, handle
        return {"temp": None, "caches": None}

    def sandbox_files(self, plan: SandboxPlan, handle: str) -> SandboxFiles | None:
        del plan, handle
        return None  # the files are in the sandbox: export reads them there

    async def export_remote(
        self, plan: SandboxPlan, handle: str, paths: list[str], limits: ExportLimits
    ) -> list[ExportedFile]:
        del plan
        live = self._get(handle)
        await self._extend(live)
        return await export(live.files, live.sandbox, paths, limits)

    async def remove_remote(
        self, plan: SandboxPlan, handle: str, path: str, sha256: str
    ) -> str | None:
        from box_runtime.export import LIMITS

        live = self._get(handle)
        kept = await remove_if_unchanged(live.files, live.sandbox, path, sha256, LIMITS)
        if kept is None:
            await self._pull(live, plan)  # the host copy of a workspace file goes too
        return kept

    async def aclose(self) -> None:
        self._live.clear()
