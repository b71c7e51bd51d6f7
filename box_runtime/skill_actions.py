"""The eleven 0.5 skill actions: a thin layer over :class:`~box_runtime.skills.SkillStore`.

Each request's workspace (its ``context``) picks the store's namespace, so two
workspaces never see each other's skills; a request without a workspace context is
refused. Store work runs in a worker thread, one operation per workspace at a time.
Archives arrive as ``__file_chunk`` transfers named by ``file_key``. The 0.5 actions
carry no revisions: an update or a file write applies to the skill's current
revision (the store still publishes each change as a new one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import anyio

from box_runtime.errors import BoxValidationError
from box_runtime.protocol import (
    SKILL_CREATE,
    SKILL_DELETE,
    SKILL_GET,
    SKILL_INSTALL_ZIP,
    SKILL_LIST,
    SKILL_LIST_FILES,
    SKILL_PREVIEW_ZIP,
    SKILL_READ_FILE,
    SKILL_SCAN,
    SKILL_UPDATE,
    SKILL_WRITE_FILE,
    AnyResult,
    OneSkill,
    SkillCreate,
    SkillFile,
    SkillFiles,
    SkillList,
    SkillName,
    SkillPath,
    SkillUpdate,
    SkillWrite,
    SkillZipInstall,
    SkillZipPreview,
)
from box_runtime.scope import workspace_namespace
from box_runtime.sessions import Tenant
from box_runtime.skills import SkillStore
from langbot_plugin.protocol.spec import ActionSpec, Empty
from langbot_plugin.rpc import RequestContext

__all__ = ["SkillActions"]

T = TypeVar("T")


class SkillActions:
    """Handlers of the skill actions; ``root`` and ``tenant`` come from the service."""

    def __init__(
        self,
        root: Callable[[], str],
        tenant: Callable[[RequestContext], Any],
    ) -> None:
        self._root = root
        self._tenant = tenant
        self._locks: dict[str, anyio.Lock] = {}

    async def _call(self, ctx: RequestContext, work: Callable[[SkillStore], T]) -> T:
        tenant: Tenant | None = await self._tenant(ctx)
        if tenant is None:
            raise BoxValidationError("skill actions need the request's workspace context")
        namespace = workspace_namespace(tenant.instance_uuid, tenant.workspace_uuid)
        store = SkillStore(self._root()).scoped(namespace)
        lock = self._locks.setdefault(namespace, anyio.Lock())
        async with lock:
            return await anyio.to_thread.run_sync(work, store)

    async def list(self, params: Empty, ctx: RequestContext) -> SkillList:
        del params
        return SkillList(skills=await self._call(ctx, SkillStore.list_skills))

    async def get(self, params: SkillName, ctx: RequestContext) -> OneSkill:
        return OneSkill(skill=await self._call(ctx, lambda s: s.get_skill(params.name)))

    async def create(self, params: SkillCreate, ctx: RequestContext) -> OneSkill:
        return OneSkill(skill=await self._call(ctx, lambda s: s.create_skill(params.skill)))

    async def update(self, params: SkillUpdate, ctx: RequestContext) -> OneSkill:
        def work(store: SkillStore) -> dict[str, Any]:
            base = _current_revision(store, params.name)
            return store.update_skill(params.name, params.skill, base_revision=base)

        return OneSkill(skill=await self._call(ctx, work))

    async def delete(self, params: SkillName, ctx: RequestContext) -> AnyResult:
        return AnyResult(**await self._call(ctx, lambda s: s.delete_skill(params.name)))

    async def scan(self, params: SkillPath, ctx: RequestContext) -> AnyResult:
        return AnyResult(**await self._call(ctx, lambda s: s.scan_directory(params.path)))

    async def list_files(self, params: SkillFiles, ctx: RequestContext) -> AnyResult:
        return AnyResult(
            **await self._call(
                ctx,
                lambda s: s.list_skill_files(
                    params.name, params.path, params.include_hidden, params.max_entries
                ),
            )
        )

    async def read_file(self, params: SkillFile, ctx: RequestContext) -> AnyResult:
        return AnyResult(
            **await self._call(ctx, lambda s: s.read_skill_file(params.name, params.path))
        )

    async def write_file(self, params: SkillWrite, ctx: RequestContext) -> AnyResult:
        def work(store: SkillStore) -> dict[str, Any]:
            base = _current_revision(store, params.name)
            return store.write_skill_file(
                params.name, params.path, params.content, base_revision=base
            )

        return AnyResult(**await self._call(ctx, work))

    async def preview_zip(self, params: SkillZipPreview, ctx: RequestContext) -> SkillList:
        data = ctx.session.files.take(params.file_key)
        skills = await self._call(
            ctx,
            lambda s: s.preview_zip_upload(
                file_bytes=data,
                filename=params.filename,
                source_subdir=params.source_subdir or "",
                target_suffix=params.target_suffix,
            ),
        )
        return SkillList(skills=skills)

    async def install_zip(self, params: SkillZipInstall, ctx: RequestContext) -> SkillList:
        data = ctx.session.files.take(params.file_key)
        skills = await self._call(
            ctx,
            lambda s: s.install_zip_upload(
                file_bytes=data,
                filename=params.filename,
                source_paths=params.source_paths or [],
                source_path=params.source_path or "",
                source_subdir=params.source_subdir or "",
                target_suffix=params.target_suffix,
            ),
        )
        return SkillList(skills=skills)

    def handlers(self) -> dict[ActionSpec[Any, Any], Any]:
        return {
            SKILL_LIST: self.list,
            SKILL_GET: self.get,
            SKILL_CREATE: self.create,
            SKILL_UPDATE: self.update,
            SKILL_DELETE: self.delete,
            SKILL_SCAN: self.scan,
            SKILL_LIST_FILES: self.list_files,
            SKILL_READ_FILE: self.read_file,
            SKILL_WRITE_FILE: self.write_file,
            SKILL_PREVIEW_ZIP: self.preview_zip,
            SKILL_INSTALL_ZIP: self.install_zip,
        }


def _current_revision(store: SkillStore, name: str) -> str | None:
    """The 0.5 actions change whatever revision is current (they carry none)."""
    current = store.get_skill(name)
    return str(current["revision"]) if current else None
