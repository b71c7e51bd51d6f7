"""The reference's in-process ``BoxRuntime``: a face over :class:`box_runtime.runtime.BoxRuntime`.

``BoxRuntime(logger, backends=[...], session_ttl_sec=...)`` holds one runtime of
:mod:`box_runtime` (:attr:`BoxRuntime.core`) and answers with the reference's method names
and shapes; everything a method does is the core's. What the face decides (the order of
``backends``, host paths while no roots are configured, the context-free namespace of
calls without ``action_context``, the task :meth:`initialize` starts and
:meth:`shutdown` ends): docs/box.md, *The in-process runtime at the reference's paths*.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Sequence
from typing import Any

from box_runtime.backends import Selection
from box_runtime.backends.base import SandboxBackend
from box_runtime.config import BoxConfig
from box_runtime.errors import BoxReadinessError
from box_runtime.models import BoxExecutionResult, BoxSessionInfo, BoxSpec
from box_runtime.process_models import DEFAULT_PROCESS_ID, ManagedProcessSpec
from box_runtime.runtime import BoxRuntime as CoreRuntime
from box_runtime.service import runtime_status
from box_runtime.sessions import Tenant
from box_runtime.storage import verify_shared_workspace
from langbot_plugin.box.backend import BaseSandboxBackend, core_backend
from langbot_plugin.entities.io.context import ActionContext

__all__ = ["BoxRuntime"]

#: What ``box.backend: local`` keeps of the given backends (the reference's rule).
_LOCAL_NAMES = ("docker", "nsjail")


def _tenant(action_context: ActionContext | dict[str, Any] | None) -> Tenant | None:
    if action_context is None:
        return None
    context = ActionContext.model_validate(action_context)
    return Tenant(context.instance_uuid, context.workspace_uuid, context.placement_generation)


def _session_dict(info: BoxSessionInfo) -> dict[str, Any]:
    return info.model_dump(mode="json")


class BoxRuntime:
    """Sessions on one backend, with the reference's in-process API."""

    def __init__(  # noqa: PLR0917 - the reference's signature
        self,
        logger: logging.Logger,
        backends: Sequence[BaseSandboxBackend | None] | None = None,
        session_ttl_sec: int = 300,
        max_sessions: int = 64,
        max_managed_processes: int = 64,
        max_completed_processes: int = 256,
        completed_process_retention_sec: int = 300,
    ) -> None:
        del completed_process_retention_sec  # the core keeps max_completed_processes
        self.logger = logger
        self.backends = None if backends is None else [b for b in backends if b is not None]
        config: dict[str, Any] = {
            "sessions": {"ttl_sec": session_ttl_sec},
            "limits": {
                "max_sessions": max_sessions,
                "max_managed_processes": max_managed_processes,
                "max_completed_processes": max_completed_processes,
            },
        }
        for backend in self.backends or ():
            section = getattr(backend, "section", None)
            if section:
                config[backend.name] = section
        self.core = CoreRuntime(
            config=config,
            selector=None if self.backends is None else self._select,
            mounts_checked_by_caller=True,
        )
        # As in the reference, the host's LANGBOT_BOX_CONFIG wins over the arguments.
        env_config = os.environ.get("LANGBOT_BOX_CONFIG", "").strip()
        if env_config:
            self.core.apply_config(json.loads(env_config))
        self._stop = asyncio.Event()
        self._lifespan: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ configuration

    @property
    def instance_id(self) -> str:
        return self.core.settings.deployment_id

    @property
    def session_ttl_sec(self) -> int:
        return self.core.config.sessions.ttl_sec

    @property
    def max_sessions(self) -> int:
        return self.core.config.limits.max_sessions

    @property
    def max_rpc_file_bytes(self) -> int:
        return self.core.config.limits.max_rpc_file_bytes

    @property
    def max_admission_records(self) -> int:
        return self.core.config.limits.max_admission_records

    @property
    def admission_required(self) -> bool:
        return self.core.admission.required

    def init(self, config: dict[str, Any]) -> None:
        """Apply the host's ``box`` configuration (deep-merged; a new backend on next use)."""
        self.core.apply_config(config)

    async def _select(self, config: BoxConfig) -> Selection:
        """The reference's choice among the given backends."""
        requested = str(self.core.settings.raw.get("backend") or "").strip()
        faces = self.backends or []
        if requested == "local":
            candidates = [b for b in faces if b.name in _LOCAL_NAMES]
        elif requested:
            candidates = [b for b in faces if b.name == requested]
        else:
            candidates = [b for b in faces if not getattr(b, "unsafe_direct_execution", False)]
        reasons: dict[str, str] = {}
        for face in candidates:
            backend: SandboxBackend | None = None
            try:
                await face.initialize()
                backend = core_backend(face, config)
                why = await backend.probe()
            except Exception as exc:  # a probe must never take the runtime down
                why = f"probe failed: {exc}"
            if why is None and backend is not None:
                return Selection(backend, requested or "given", reasons)
            reasons[face.name] = why or "unavailable"
            if backend is not None:
                await backend.aclose()
        return Selection(None, requested or "given", reasons)

    # ------------------------------------------------------------------ lifecycle

    async def initialize(self) -> None:
        """Choose the backend and start the reaper (in the face's own task)."""
        if self._lifespan is not None and not self._lifespan.done():
            return
        self._stop = asyncio.Event()
        started = asyncio.Event()
        self._lifespan = asyncio.get_running_loop().create_task(self._run(started))
        waiter = asyncio.ensure_future(started.wait())
        await asyncio.wait({waiter, self._lifespan}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if self._lifespan.done():
            self._lifespan.result()  # raise why it could not start

    async def _run(self, started: asyncio.Event) -> None:
        async with self.core.running():
            await self.core.backend_info()  # choose the backend now, as the reference does
            started.set()
            await self._stop.wait()

    async def shutdown(self) -> None:
        """Remove the non-persistent sessions, stop managed processes, close the backend."""
        lifespan, self._lifespan = self._lifespan, None
        if lifespan is not None and not lifespan.done():
            self._stop.set()
            await lifespan
        else:
            await self.core.aclose()

    # ------------------------------------------------------------------ sessions

    async def execute(
        self, spec: BoxSpec, action_context: ActionContext | dict[str, Any] | None = None
    ) -> BoxExecutionResult:
        return await self.core.exec(spec, _tenant(action_context))

    async def create_session(
        self, spec: BoxSpec, action_context: ActionContext | dict[str, Any] | None = None
    ) -> dict[str, Any]:
        return _session_dict(await self.core.create_session(spec, _tenant(action_context)))

    async def delete_session(self, session_id: str) -> None:
        await self.core.delete_session(session_id, None)

    def get_sessions(self) -> list[dict[str, Any]]:
        return [_session_dict(self.core.session_info(s)) for s in self.core.sessions(None)]

    def get_session(self, session_id: str) -> dict[str, Any]:
        result = _session_dict(self.core.get_session(session_id, None))
        session = self.core.existing(session_id, None)
        processes = {
            p.process_id: p.info().model_dump(mode="json")
            for p in self.core.processes.in_session(session.key)
        }
        if processes:
            result["managed_processes"] = processes
            if DEFAULT_PROCESS_ID in processes:
                result["managed_process"] = processes[DEFAULT_PROCESS_ID]
        return result

    async def get_status(self) -> dict[str, Any]:
        return (await runtime_status(self.core, None)).model_dump(mode="json")

    async def get_backend_info(self) -> dict[str, Any]:
        return (await self.core.backend_info()).model_dump(mode="json")

    def verify_shared_workspace(self, marker_name: str) -> dict[str, Any]:
        root = self.core.default_workspace
        if root is None:
            raise BoxReadinessError("no shared workspace is configured (box.local.host_root)")
        return verify_shared_workspace(root, marker_name)

    # ------------------------------------------------------------------ managed processes

    async def start_managed_process(
        self,
        session_id: str,
        spec: ManagedProcessSpec,
        action_context: ActionContext | dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        process, _ = await self.core.start_managed_process(
            session_id, spec, _tenant(action_context)
        )
        return process.info().model_dump(mode="json")

    def get_managed_process(
        self, session_id: str, process_id: str = DEFAULT_PROCESS_ID
    ) -> dict[str, Any]:
        return (
            self.core.managed_process(session_id, process_id, None).info().model_dump(mode="json")
        )

    async def stop_managed_process(
        self, session_id: str, process_id: str = DEFAULT_PROCESS_ID
    ) -> None:
        await self.core.stop_managed_process(session_id, process_id, None)
