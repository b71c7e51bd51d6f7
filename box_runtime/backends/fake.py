"""An in-memory backend for unit tests: no engine, a tiny command language, full records.

Commands, several in one exec separated by ``; `` (the last one's status counts,
``exit`` ends the list); ``CMD >&2`` sends a command's stdout to stderr, ``CMD > PATH``
and ``CMD >> PATH`` into a file of the session (below the workspace or ``/tmp``):
``echo``, ``stderr``, ``printenv``, ``pwd``, ``touch`` / ``cat``, ``bytes N``,
``sleep`` / ``exit`` / ``true``, ``fill BYTES`` (256 KiB at a time, ``No space left``
ends it with exit 1) and ``wait GATE`` (until :meth:`FakeBackend.gate` ``(GATE).set()``);
:meth:`FakeBackend._run` has each one.

Every sandbox, exec and removal is recorded; :meth:`FakeBackend.vanish` makes a sandbox
disappear behind the runtime's back. Managed processes are the in-memory programs of
:mod:`.fake_process`, kept in :attr:`FakeBackend.processes`.
"""

from __future__ import annotations

import errno
import itertools
import os
from dataclasses import dataclass, field

import anyio

from box_runtime.backends.base import (
    ExecOutcome,
    ExecRequest,
    ProcessRequest,
    SandboxBackend,
    SandboxPlan,
    SpawnedProcess,
)
from box_runtime.backends.fake_process import FakeProcess
from box_runtime.errors import BoxSandboxGoneError, BoxValidationError
from box_runtime.models import ARTIFACT_MOUNT_ROOT
from box_runtime.output import OutputCollector

__all__ = ["FakeBackend", "FakeExec"]


@dataclass(slots=True)
class FakeExec:
    handle: str
    command: str
    workdir: str
    env: dict[str, str]
    timeout_sec: float
    timed_out: bool = False


@dataclass(slots=True)
class _Sandbox:
    plan: SandboxPlan
    running: int = 0
    max_running: int = 0
    gone: bool = False
    execs: list[FakeExec] = field(default_factory=list[FakeExec])


class FakeBackend(SandboxBackend):
    name = "fake"

    def __init__(self, *, unavailable_reason: str | None = None) -> None:
        self.unavailable_reason = unavailable_reason
        self.sandboxes: dict[str, _Sandbox] = {}
        self.started: list[SandboxPlan] = []
        self.stopped: list[str] = []
        self.orphans: dict[str, list[str]] = {}
        self.cleaned: list[str] = []
        self.closed = False
        self._ids = itertools.count(1)
        self._gates: dict[str, anyio.Event] = {}
        self.exec_started = anyio.Event()
        self.processes: list[FakeProcess] = []

    # ------------------------------------------------------------------ test helpers

    def gate(self, name: str) -> anyio.Event:
        """The event a ``wait NAME`` command blocks on."""
        return self._gates.setdefault(name, anyio.Event())

    def vanish(self, handle: str) -> None:
        """Remove a sandbox without telling the runtime."""
        self.sandboxes[handle].gone = True

    def live(self) -> list[str]:
        return [handle for handle, box in self.sandboxes.items() if not box.gone]

    def max_running(self, handle: str) -> int:
        return self.sandboxes[handle].max_running

    def execs(self, handle: str) -> list[FakeExec]:
        return self.sandboxes[handle].execs

    # ------------------------------------------------------------------ backend

    async def probe(self) -> str | None:
        return self.unavailable_reason

    async def start(self, plan: SandboxPlan) -> str:
        handle = f"fake-{next(self._ids)}"
        self.sandboxes[handle] = _Sandbox(plan)
        self.started.append(plan)
        return handle

    async def stop(self, plan: SandboxPlan, handle: str) -> None:
        del plan
        box = self.sandboxes.get(handle)
        if box is not None:
            box.gone = True
        self.stopped.append(handle)

    async def spawn(
        self, plan: SandboxPlan, handle: str, request: ProcessRequest
    ) -> SpawnedProcess:
        del plan
        box = self.sandboxes.get(handle)
        if box is None or box.gone:
            raise BoxSandboxGoneError(f"fake sandbox {handle} is gone")
        process = FakeProcess(request)
        self.processes.append(process)
        return process

    async def cleanup_orphans(self, deployment_id: str) -> list[str]:
        removed = self.orphans.pop(deployment_id, [])
        self.cleaned.extend(removed)
        return removed

    async def aclose(self) -> None:
        self.closed = True

    async def exec(self, plan: SandboxPlan, handle: str, request: ExecRequest) -> ExecOutcome:
        box = self.sandboxes.get(handle)
        if box is None or box.gone:
            raise BoxSandboxGoneError(f"fake sandbox {handle} is gone")
        record = FakeExec(
            handle, request.command, request.workdir, dict(request.env), request.timeout_sec
        )
        box.execs.append(record)
        stdout = OutputCollector(request.output_limit, request.head_ratio)
        stderr = OutputCollector(request.output_limit, request.head_ratio)
        box.running += 1
        box.max_running = max(box.max_running, box.running)
        self.exec_started.set()
        exit_code: int | None = None
        try:
            with anyio.move_on_after(request.timeout_sec) as scope:
                exit_code = await self._run(plan, request, stdout, stderr)
            if scope.cancelled_caught:
                record.timed_out = True
                exit_code = None
        finally:
            box.running -= 1
        if box.gone:
            raise BoxSandboxGoneError(f"fake sandbox {handle} vanished during exec")
        return ExecOutcome(exit_code, record.timed_out, stdout.result(), stderr.result())

    async def _run(
        self,
        plan: SandboxPlan,
        request: ExecRequest,
        stdout: OutputCollector,
        stderr: OutputCollector,
    ) -> int:
        status = 0
        await anyio.to_thread.run_sync(
            lambda: os.makedirs(_host_path(plan, request, "."), exist_ok=True)
        )
        for part in request.command.split("; "):
            command, target, append = _redirection(part.strip())
            out = stdout if target is None else OutputCollector(1 << 30, 1.0)
            if target == "&2":
                out = stderr
            if command.startswith("exit "):
                return int(command.removeprefix("exit "))
            status = await self._one(plan, request, command, out, stderr)
            if target not in (None, "&2"):
                data = out.result().text.encode()
                try:
                    path = _host_path(plan, request, target, write=True)
                    async with await anyio.open_file(path, "ab" if append else "wb") as file:
                        await file.write(data)
                except OSError as exc:
                    stderr.feed(f"fake: {target}: {exc.strerror}\n".encode())
                    status = 1
        return status

    async def _one(
        self,
        plan: SandboxPlan,
        request: ExecRequest,
        command: str,
        stdout: OutputCollector,
        stderr: OutputCollector,
    ) -> int:
        verb, _, arg = command.partition(" ")
        if verb in ("touch", "cat"):
            try:
                path = _host_path(plan, request, arg, write=verb == "touch")
                if verb == "touch":
                    await anyio.Path(path).touch()
                    return 0
                stdout.feed(await anyio.Path(path).read_bytes())
            except OSError as exc:
                stderr.feed(f"cat: {arg}: {exc.strerror}\n".encode())
                return 1
            return 0
        if verb == "true":
            return 0
        if verb == "echo":
            stdout.feed(f"{arg}\n".encode())
        elif verb == "stderr":
            stderr.feed(f"{arg}\n".encode())
        elif verb == "printenv":
            if arg not in request.env:
                return 1
            stdout.feed(f"{request.env[arg]}\n".encode())
        elif verb == "pwd":
            stdout.feed(f"{request.workdir}\n".encode())
        elif verb == "bytes":
            remaining = int(arg)
            chunk = b"x" * 65536
            while remaining > 0:
                stdout.feed(chunk[: min(remaining, len(chunk))])
                remaining -= len(chunk)
        elif verb == "sleep":
            await anyio.sleep(float(arg))
        elif verb == "exit":
            return int(arg)
        elif verb == "wait":
            await self.gate(arg).wait()
        elif verb == "fill":
            return await _fill(os.path.join(plan.mounts[0].host_path, "fill.bin"), int(arg), stderr)
        else:
            stderr.feed(f"fake: unknown command {verb!r}\n".encode())
            return 127
        return 0


def _redirection(command: str) -> tuple[str, str | None, bool]:
    """``(command, target, append)``: ``CMD >&2``, ``CMD > PATH``, ``CMD >> PATH``."""
    if command.endswith(" >&2"):
        return command.removesuffix(" >&2"), "&2", False
    for marker, append in ((" >> ", True), (" > ", False)):
        if marker in command:
            head, _, target = command.rpartition(marker)
            return head, target.strip(), append
    return command, None, False


def _host_path(plan: SandboxPlan, request: ExecRequest, path: str, *, write: bool = False) -> str:
    """The host file behind a sandbox path (the workspace, ``/tmp`` or one of the
    command's content-addressed mounts, which are read-only); else refused."""
    full = os.path.normpath(os.path.join(request.workdir, path))
    workspace = plan.mounts[0]
    roots = [
        (plan.mount_path, workspace.host_path, workspace.read_only),
        ("/tmp", plan.tmp_dir, False),
    ]
    roots += [(a.sandbox_path, a.host_path, True) for a in request.artifacts]
    for sandbox_root, host_root, read_only in roots:
        if full == sandbox_root or full.startswith(sandbox_root.rstrip("/") + "/"):
            if write and read_only:
                raise PermissionError(errno.EROFS, "Read-only file system")
            return os.path.join(host_root, os.path.relpath(full, sandbox_root))
    if full.startswith(ARTIFACT_MOUNT_ROOT + "/"):  # a command that brought no such mount
        raise FileNotFoundError(errno.ENOENT, "No such file or directory")
    raise BoxValidationError(f"the fake backend has no file {full}")


async def _fill(path: str, size: int, stderr: OutputCollector) -> int:
    chunk = b"x" * (256 * 1024)
    target = anyio.Path(path)
    async with await target.open("ab", buffering=0) as file:
        while size > 0:
            try:
                await file.write(chunk[: min(size, len(chunk))])
            except OSError as exc:
                stderr.feed(f"fill: {exc.strerror}\n".encode())
                return 1
            size -= len(chunk)
            await anyio.sleep(0.01)
    return 0
