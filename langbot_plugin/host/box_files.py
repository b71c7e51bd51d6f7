"""Explicit Box file export, the host's side (seed 004): handles, dedupe and delivery.

:class:`BoxFiles` is what a host does between a runner and the Box for
``export_box_files`` and the deliveries (``reply_files``, ``message.completed``
``file_ids``), through :class:`BoxFileAccess` (the Box's own client); the host never
reads sandbox files itself. Per run, in one lock: the selection is checked, the Box
reads every selected file or none, the run's limits are checked against the files new
to the run (an unchanged file keeps its handle), the new opaque handles are registered,
and the Box removes the files whose content still matches (a failure is a warning).
A delivery names undelivered handles of this run, or nothing is sent. Refusals are
:class:`~langbot_plugin.host.errors.BoxFilesError` with the reference's codes
(docs/box.md, docs/errors.md).
"""

from __future__ import annotations

import posixpath
import secrets
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import anyio

from langbot_plugin.api.entities.builtin.agent_runner.box import BoxFile
from langbot_plugin.host.deliveries import DeliveredFile
from langbot_plugin.host.errors import BoxFilesError
from langbot_plugin.protocol.box_export import (
    EXPORT_LIMITS,
    LIMIT_EXCEEDED,
    ExportLimits,
    file_ids_problem,
    limit_refusal,
    paths_problem,
)
from langbot_plugin.protocol.host_api.box import ExportedBoxFiles
from langbot_plugin.rpc.errors import RemoteError, RPCError

__all__ = [
    "CLEANUP_FAILED",
    "BoxFileAccess",
    "BoxFiles",
    "HeldFile",
    "RunFiles",
]

T = TypeVar("T")

REFUSED = "box.export.refused"
INVALID_RESPONSE = "box.export.invalid_response"
NOT_DELIVERABLE = "box.files.not_deliverable"
#: The warning of an export whose files were accepted but not removed from the Box.
CLEANUP_FAILED = "Files accepted, but cleanup failed; do not repeat delivery."

_IMAGE = frozenset({"png", "jpg", "jpeg", "gif", "webp", "bmp"})
_VOICE = frozenset({"wav", "mp3", "silk", "amr", "ogg", "m4a", "aac"})
# The Box's error codes this side reads (it cannot import the Box's classes).
_BOX_QUOTA = "box_quota_exceeded"
_BOX_REFUSED = "box_export_refused"
_BOX_INVALID = "box_validation"


class FileRead(Protocol):
    """One file the Box read: its sandbox path, exact bytes, digest and size."""

    @property
    def path(self) -> str: ...
    @property
    def data(self) -> bytes: ...
    @property
    def sha256(self) -> str: ...
    @property
    def size(self) -> int: ...


class KeptFile(Protocol):
    @property
    def path(self) -> str: ...
    @property
    def reason(self) -> str: ...


class RemoveOutcome(Protocol):
    @property
    def removed(self) -> Sequence[str]: ...
    @property
    def kept(self) -> Sequence[KeptFile]: ...


class BoxFileAccess(Protocol):
    """What the host needs of the Box (``box_runtime.client.BoxClient`` is one)."""

    async def read_files(
        self, session_id: str, paths: Sequence[str], *, run_id: str | None = None
    ) -> Sequence[FileRead]: ...

    async def remove_files_if_match(
        self, session_id: str, files: Iterable[tuple[str, str]]
    ) -> RemoveOutcome: ...


@dataclass(slots=True)
class HeldFile:
    """An exported file the host holds for its run until it is delivered."""

    id: str
    path: str
    sha256: str
    data: bytes
    delivered: bool = False

    @property
    def name(self) -> str:
        return posixpath.basename(self.path)

    @property
    def type(self) -> str:
        """``Image``, ``Voice`` or ``File``, by extension (as the 4.11.2 host sends them)."""
        ext = self.name.rsplit(".", 1)[-1].lower() if "." in self.name else ""
        return "Image" if ext in _IMAGE else "Voice" if ext in _VOICE else "File"

    def public(self) -> BoxFile:
        size = len(self.data)
        return BoxFile(id=self.id, name=self.name, type=self.type, size=size, path=self.path)

    def delivered_form(self) -> DeliveredFile:
        return DeliveredFile(self.id, self.name, self.type, self.path, self.sha256, self.data)


@dataclass(eq=False)
class RunFiles:
    """One run's Box session and the files it exported, by handle in export order."""

    run_id: str
    session_id: str
    files: dict[str, HeldFile] = field(default_factory=dict[str, HeldFile])
    by_source: dict[tuple[str, str], str] = field(default_factory=dict[tuple[str, str], str])
    lock: anyio.Lock = field(default_factory=anyio.Lock)

    @property
    def total_bytes(self) -> int:
        return sum(len(f.data) for f in self.files.values())

    def held(self, read: FileRead) -> HeldFile:
        """The handle a file read from the Box has in this run."""
        return self.files[self.by_source[(read.path, read.sha256)]]

    def pending(self) -> list[BoxFile]:
        return [f.public() for f in self.files.values() if not f.delivered]


def _new_id() -> str:
    return "file-" + secrets.token_urlsafe(24)


def _refused(message: str, paths: Sequence[str], reason: str, **details: Any) -> BoxFilesError:
    return BoxFilesError.of(
        REFUSED,
        message,
        details={"reason": reason, "sandbox_paths": list(paths), "files_retained": True, **details},
    )


def _over(kind: str, limit: int, actual: int, paths: Sequence[str], **extra: Any) -> BoxFilesError:
    message, details = limit_refusal(kind, limit, actual, paths, **extra)
    return BoxFilesError.of(LIMIT_EXCEEDED, message, details=details)


def _from_box(exc: RPCError, paths: Sequence[str]) -> BoxFilesError:
    """The runner's refusal for a Box error of a read: same text and details."""
    code = exc.remote_code if isinstance(exc, RemoteError) else exc.code
    details = {**exc.details, "sandbox_paths": exc.details.get("sandbox_paths", list(paths))}
    details["files_retained"] = True
    if code == _BOX_QUOTA:
        kind = str(details.get("quota", "")).removeprefix("export_")
        details = {"limit_type": kind, **details}
        return BoxFilesError.of(LIMIT_EXCEEDED, exc.message, details=details)
    if code == _BOX_REFUSED:
        which = INVALID_RESPONSE if details.get("reason") == "invalid_response" else REFUSED
        return BoxFilesError.of(which, exc.message, details=details)
    if code == _BOX_INVALID:
        return BoxFilesError.of(REFUSED, exc.message, details={"reason": "invalid_path", **details})
    return BoxFilesError.of(
        REFUSED,
        f"export failed in the Box ({exc.message}); no file was exported, all were kept",
        details={"reason": "box_error", "box_code": code, **details},
        retryable=exc.retryable,
    )


class BoxFiles:
    """Exports and deliveries of every live run (see the module docstring)."""

    def __init__(
        self,
        box: BoxFileAccess | None = None,
        *,
        limits: ExportLimits = EXPORT_LIMITS,
        new_id: Callable[[], str] = _new_id,
    ) -> None:
        self.box = box
        self.limits = limits
        self._new_id = new_id
        self._runs: dict[str, RunFiles] = {}

    # ------------------------------------------------------------------ runs

    def bind(self, run_id: str, session_id: str) -> RunFiles:
        """Make ``session_id`` (an existing Box session) the run's Box."""
        current = self._runs.get(run_id)
        if current is not None and current.session_id != session_id:
            raise BoxFilesError.of(
                REFUSED, "a run cannot change its Box", details={"reason": "rebind"}
            )
        if current is None:
            current = self._runs[run_id] = RunFiles(run_id, session_id)
        return current

    def release(self, run_id: str) -> None:
        """Forget a run's files (its handles end with the run)."""
        self._runs.pop(run_id, None)

    def of(self, run_id: str) -> RunFiles | None:
        return self._runs.get(run_id)

    # ------------------------------------------------------------------ export

    async def export(self, run_id: str, paths: Sequence[str]) -> ExportedBoxFiles:
        """Export ``paths`` of the run's Box, all or none (see the module docstring)."""
        selected: Any = paths
        problem = paths_problem(selected)
        if problem is not None:
            listed: list[Any] = selected if isinstance(selected, list) else []
            raise _refused(problem, [p for p in listed if isinstance(p, str)], "invalid_path")
        if len(paths) > self.limits.call_files:
            raise _over("call_files", self.limits.call_files, len(paths), paths)
        run = self._runs.get(run_id)
        if run is None or self.box is None:
            why = "this host has no Box" if self.box is None else "the run has no Box bound"
            raise _refused(f"cannot export: {why}; the files were kept", paths, "no_box")
        async with run.lock:
            try:
                batch = await self.box.read_files(run.session_id, list(paths))
            except RPCError as exc:
                raise _from_box(exc, paths) from exc
            if [f.path for f in batch] != list(paths) or any(len(f.data) != f.size for f in batch):
                raise BoxFilesError.of(
                    INVALID_RESPONSE,
                    "invalid export response: the Box answered other files than were "
                    "selected; the files were kept",
                    details={"reason": "invalid_response", "sandbox_paths": list(paths),
                             "files_retained": True},
                )  # fmt: skip
            self._admit(run, batch)
            warning = await self._clean(run, batch)
            delivered = [f.path for f in batch if run.held(f).delivered]
            if delivered:
                note = f"already delivered unchanged, not offered again: {', '.join(delivered)}"
                warning = f"{warning} {note}" if warning else note.capitalize()
            return ExportedBoxFiles(items=run.pending(), warning=warning)

    def _admit(self, run: RunFiles, batch: Sequence[FileRead]) -> None:
        """Check the run's limits, then register a handle for each file new to the run."""
        new = [f for f in batch if (f.path, f.sha256) not in run.by_source]
        paths = [f.path for f in new]
        count = len(run.files) + len(new)
        limits = self.limits
        if count > limits.run_files:
            remaining = max(0, limits.run_files - len(run.files))
            raise _over("run_files", limits.run_files, count, paths, remaining=remaining)
        held = run.total_bytes
        size = held + sum(len(f.data) for f in new)
        if size > limits.run_bytes:
            remaining = max(0, limits.run_bytes - held)
            raise _over("run_bytes", limits.run_bytes, size, paths, remaining=remaining)
        for f in new:
            handle = HeldFile(self._new_id(), f.path, f.sha256, bytes(f.data))
            run.files[handle.id] = handle
            run.by_source[(f.path, f.sha256)] = handle.id

    async def _clean(self, run: RunFiles, batch: Sequence[FileRead]) -> str | None:
        """Remove the accepted files still unchanged; a warning if some stayed."""
        assert self.box is not None
        try:
            outcome = await self.box.remove_files_if_match(
                run.session_id, [(f.path, f.sha256) for f in batch]
            )
        except (RPCError, ConnectionError, TimeoutError):
            return CLEANUP_FAILED
        stayed = [f"{k.path} ({k.reason})" for k in outcome.kept if k.reason != "missing"]
        if not stayed:
            return None
        return f"Files accepted, but left in the Box: {', '.join(stayed)}; do not repeat delivery."

    # ------------------------------------------------------------------ delivery

    async def deliver(
        self,
        run_id: str,
        file_ids: Sequence[str],
        send: Callable[[list[HeldFile]], Awaitable[T]],
    ) -> T:
        """Send the run's files ``file_ids`` with ``send``, once: each must be this
        run's and not delivered yet, or nothing is sent. They count as delivered when
        ``send`` returns."""
        ids: Any = file_ids
        problem = file_ids_problem(ids)
        if problem is not None:
            raise BoxFilesError.of(NOT_DELIVERABLE, problem, details={"reason": "invalid"})
        run = self._runs.get(run_id)
        if run is None:
            raise self._undeliverable(list(file_ids), [], run_id)
        async with run.lock:
            unknown = [i for i in file_ids if i not in run.files]
            repeated = [i for i in file_ids if i in run.files and run.files[i].delivered]
            if unknown or repeated:
                raise self._undeliverable(unknown, repeated, run_id)
            files = [run.files[i] for i in file_ids]
            answer = await send(files)
            for f in files:
                f.delivered = True
            return answer

    @staticmethod
    def _undeliverable(unknown: list[str], repeated: list[str], run_id: str) -> BoxFilesError:
        parts: list[str] = []
        if unknown:
            parts.append(f"not exported by this run: {', '.join(unknown)}")
        if repeated:
            parts.append(f"already delivered: {', '.join(repeated)}")
        return BoxFilesError.of(
            NOT_DELIVERABLE,
            f"cannot deliver files of run {run_id} ({'; '.join(parts)}); nothing was sent",
            details={
                "reason": "delivered" if repeated and not unknown else "not_of_this_run",
                "not_of_this_run": unknown,
                "delivered": repeated,
                "run_id": run_id,
            },
        )
