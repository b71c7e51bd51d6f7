"""Installed plugins: the host's desired state, applied atomically and persisted.

``apply`` takes an installation binding (and, when the host sends one, the package),
checks its signature (:mod:`.signatures`), verifies and unpacks the package, prepares
its Python environment, asks the host for the plugin's settings and starts its worker.
The previous worker of the installation keeps running until the new one is initialized,
so a failed upgrade leaves the old version serving (rollback by construction). Records
survive restarts: a runtime that comes back starts what it had, and reports only what it
cannot find as missing.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
from pathlib import Path
from typing import Any
from uuid import NAMESPACE_URL, uuid5

from pydantic import BaseModel

from langbot_plugin.protocol.control_link import (
    ApplyInstallationResult,
    DesiredInstallation,
    FailedInstallation,
    ReconcileResult,
)
from langbot_plugin.protocol.handshake import PluginExecutionMode
from langbot_plugin.protocol.host_link import GET_PLUGIN_SETTINGS
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.rpc import InvalidParamsError, RPCError
from langbot_plugin.runtime.artifacts import ArtifactError, ArtifactStore
from langbot_plugin.runtime.dependencies import DependencyInstaller
from langbot_plugin.runtime.logbuffer import LogBuffer
from langbot_plugin.runtime.manifest_peek import read_identity, read_version
from langbot_plugin.runtime.plugin_check import refuse_invalid_plugin
from langbot_plugin.runtime.shared import SharedPool
from langbot_plugin.runtime.signatures import SignaturePolicy, Verdict
from langbot_plugin.runtime.state import RuntimeState
from langbot_plugin.runtime.workers import Supervisor, WorkerSpec

#: The host's execution mode that places an installation in a shared worker.
SHARED_MODE = PluginExecutionMode.SHARED_CERTIFIED.value

__all__ = ["InstallationRecord", "Installations"]

logger = logging.getLogger("langbot_plugin.runtime.installations")

_SAFE_ID = re.compile(r"[A-Za-z0-9_.-]{1,128}")


def _failed(uuid: str, exc: RPCError, limit: int | None = None) -> ApplyInstallationResult:
    return ApplyInstallationResult(
        installation_uuid=uuid,
        state="failed",
        error_code=exc.code,
        message=exc.message[:limit],
        details=exc.details or None,
    )


class InstallationRecord(BaseModel):
    installation_uuid: str
    binding: dict[str, Any]
    artifact_digest: str
    enabled: bool = True
    execution_mode: str = "dedicated"
    identity: str = ""
    #: installed through the legacy actions: served under the bridge, settings by workspace
    bridged: bool = False
    #: the package's signature status and key when it arrived (None: not checked)
    signature: str | None = None
    signature_key: str | None = None


class Installations:
    def __init__(
        self,
        state: RuntimeState,
        supervisor: Supervisor,
        artifacts: ArtifactStore,
        dependencies: DependencyInstaller,
        records_dir: Path,
        *,
        shared: SharedPool | None = None,
        signatures: SignaturePolicy | None = None,
    ) -> None:
        self.state = state
        self.supervisor = supervisor
        self.shared = shared or SharedPool(state, supervisor.policy)
        self.artifacts = artifacts
        self.dependencies = dependencies
        self.records_dir = records_dir
        self.signatures = signatures or SignaturePolicy()
        self.records: dict[str, InstallationRecord] = self._load()

    # ----------------------------------------------------------------- records

    def _load(self) -> dict[str, InstallationRecord]:
        records: dict[str, InstallationRecord] = {}
        if self.records_dir.is_dir():
            for path in sorted(self.records_dir.glob("*.json")):
                try:
                    record = InstallationRecord.model_validate_json(path.read_bytes())
                except ValueError:
                    logger.warning("ignoring unreadable installation record %s", path)
                    continue
                records[record.installation_uuid] = record
        return records

    def _record_path(self, uuid: str) -> Path:
        """Where an installation's record lives; its id comes from the host, so one that
        is not safe as a file name (``../x``) is refused, never a path."""
        if not _SAFE_ID.fullmatch(uuid) or uuid in (".", ".."):
            raise InvalidParamsError(
                "installation_uuid must be 1-128 of [A-Za-z0-9_.-]",
                details={"path": "context.installation_uuid"},
            )
        return self.records_dir / f"{uuid}.json"

    def _save(self, record: InstallationRecord) -> None:
        self.records_dir.mkdir(parents=True, exist_ok=True)
        final = self._record_path(record.installation_uuid)
        staging = final.with_suffix(f".{secrets.token_hex(4)}.tmp")
        staging.write_text(json.dumps(record.model_dump(), indent=2), encoding="utf-8")
        staging.replace(final)
        self.records[record.installation_uuid] = record

    # ----------------------------------------------------------------- operations

    async def apply(
        self,
        binding: ActionScope,
        *,
        enabled: bool,
        content: bytes | None,
        execution_mode: str = "dedicated",
        bridged: bool = False,
    ) -> ApplyInstallationResult:
        uuid = binding.installation_uuid
        assert uuid is not None
        try:
            self._record_path(uuid)
            return await self._apply(binding, uuid, enabled, content, execution_mode, bridged)
        except RPCError as exc:
            logger.error("installation %s failed: %s", uuid, exc.message)
            return _failed(uuid, exc, limit=4000)

    async def _apply(  # noqa: PLR0917 - internal, called from apply() only
        self,
        binding: ActionScope,
        uuid: str,
        enabled: bool,
        content: bytes | None,
        mode: str,
        bridged: bool,
    ) -> ApplyInstallationResult:
        record = self.records.get(uuid)
        bridged = bridged or (record is not None and record.bridged)
        if content is not None:
            verdict = self.signatures.check(content)  # before anything is written
            digest, folder = self.artifacts.put(content, binding.artifact_digest)
        else:
            digest = binding.artifact_digest or (record.artifact_digest if record else "")
            if record is not None and not self.artifacts.has(digest):
                digest = record.artifact_digest
            verdict = self._known_verdict(digest)
            if not digest or not self.artifacts.has(digest):
                return ApplyInstallationResult(installation_uuid=uuid, state="artifact_missing")
            if not self.signatures.passes(verdict):
                logger.info(
                    "installation %s: package %s was not verified under the signature policy; "
                    "answering artifact_missing so that the host sends it",
                    uuid,
                    digest[:12],
                )
                return ApplyInstallationResult(installation_uuid=uuid, state="artifact_missing")
            folder = self.artifacts.path_for(digest)
        identity = read_identity(folder)
        await refuse_invalid_plugin(folder)
        if content is not None:
            self.signatures.warn(verdict, uuid, identity, read_version(folder))
        updated = InstallationRecord(
            installation_uuid=uuid,
            binding=binding.as_context(),
            artifact_digest=digest,
            enabled=enabled,
            execution_mode=mode,
            identity=identity,
            bridged=bridged,
            signature=verdict.status if verdict else None,
            signature_key=verdict.key_id if verdict else None,
        )
        if not enabled:
            await self.stop(uuid)
            self._save(updated)
            return ApplyInstallationResult(installation_uuid=uuid, state="disabled")
        if self.state.options.debug_only:
            self._save(updated)
            return ApplyInstallationResult(
                installation_uuid=uuid,
                state="not_started",
                error_code="runtime_debug_only",
                message="the plugin runtime serves debug plugins only (lbp rt --debug-only); "
                "the package is verified and kept, and starts once the runtime runs without it",
            )
        python = await self.dependencies.ensure(folder, name=identity)
        author, name = identity.split("/", 1)
        host = self.state.upstream.current()
        settings_scope = binding.workspace_context() if bridged else binding.as_context()
        settings = await GET_PLUGIN_SETTINGS.call(
            host, {"plugin_author": author, "plugin_name": name}, context=settings_scope or None
        )
        spec = WorkerSpec(
            plugin_dir=folder,
            python=python,
            workspace=ActionScope.model_validate(binding.workspace_context()),
            binding=binding,
            settings=settings,
            identity=identity,
            bridged=bridged,
        )
        if mode == SHARED_MODE:
            await self.supervisor.stop(uuid)
            await self.shared.start(uuid, spec)
        else:
            await self.shared.stop(uuid)
            await self.supervisor.start(uuid, spec)
        self._save(updated)
        logger.info("installation %s: %s running from %s (%s)", uuid, identity, digest[:12], mode)
        return ApplyInstallationResult(installation_uuid=uuid, state="running")

    async def install_legacy(
        self,
        content: bytes,
        workspace: ActionScope,
        *,
        expected: tuple[str, str] | None = None,
    ) -> ApplyInstallationResult:
        """Install a package the way 0.5 hosts ask (no binding): keyed by workspace and name.

        ``expected`` (identity, version): what the package must say it is (a download)."""
        try:
            self.signatures.check(content)  # before anything is written
            digest, folder = self.artifacts.put(content)
            identity = read_identity(folder)
            if expected is not None and (identity, read_version(folder)) != expected:
                raise ArtifactError(
                    f"the package is {identity} {read_version(folder)!r}, not the "
                    f"{expected[0]} {expected[1]!r} that was asked for"
                )
        except RPCError as exc:
            logger.error(
                "installing a package in workspace %s failed: %s",
                workspace.workspace_uuid,
                exc.message,
            )
            return _failed("", exc)
        seed = f"langbot:legacy:{workspace.instance_uuid}:{workspace.workspace_uuid}:{identity}"
        binding = ActionScope.model_validate(
            {**workspace.workspace_context(), "installation_uuid": str(uuid5(NAMESPACE_URL, seed))}
        )
        return await self.apply(
            binding.model_copy(update={"artifact_digest": digest}),
            enabled=True,
            content=content,
            bridged=True,
        )

    def _known_verdict(self, digest: str) -> Verdict | None:
        """A verdict the policy accepts, of an installation of the package ``digest``."""
        known = (
            Verdict(r.signature, r.signature_key)
            for r in self.records.values()
            if r.artifact_digest == digest and r.signature is not None
        )
        return next((v for v in known if self.signatures.passes(v)), None)

    async def stop(self, uuid: str) -> None:
        """Stop the installation's worker or slot, whichever it has."""
        await self.supervisor.stop(uuid)
        await self.shared.stop(uuid)

    def running(self, uuid: str) -> bool:
        return self.supervisor.running(uuid) or self.shared.running(uuid)

    def logs_for(self, identity: str) -> LogBuffer | None:
        return self.supervisor.logs_for(identity) or self.shared.logs_for(identity)

    async def remove(self, uuid: str) -> None:
        path = self._record_path(uuid)  # an id that is not a safe name is refused first
        await self.stop(uuid)
        self.records.pop(uuid, None)
        path.unlink(missing_ok=True)
        self.state.confinement.forget(uuid)  # its data folder goes with it

    async def reconcile(self, desired: list[DesiredInstallation]) -> ReconcileResult:
        """Start what is wanted and known; list what is wanted but missing."""
        applied: list[str] = []
        missing: list[str] = []
        failed: list[FailedInstallation] = []
        for index, item in enumerate(desired):
            binding = ActionScope.from_peer(item.binding, f"installations[{index}].binding")
            uuid = binding.installation_uuid
            if uuid is None:
                continue
            handle = self.state.registry.by_installation(uuid)
            if handle is not None and handle.debug:
                applied.append(uuid)
                continue
            record = self.records.get(uuid)
            if record is None or not self.artifacts.has(record.artifact_digest):
                missing.append(uuid)
                continue
            if self.running(uuid) and item.enabled == record.enabled:
                applied.append(uuid)
                continue
            result = await self.apply(
                binding, enabled=item.enabled, content=None, execution_mode=item.execution_mode
            )
            if result.state == "failed":
                failed.append(
                    FailedInstallation(
                        installation_uuid=uuid,
                        error_code=result.error_code or "failed",
                        message=result.message or "",
                    )
                )
            elif result.state == "artifact_missing":
                missing.append(uuid)
            else:
                applied.append(uuid)
        return ReconcileResult(
            applied=applied, removed=[], missing_artifacts=missing, failed_installations=failed
        )
