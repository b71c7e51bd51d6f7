"""The interface every sandbox backend implements, and the plain data it receives.

The runtime decides *what* a sandbox is (a :class:`SandboxPlan`: image, network,
limits, already-checked mounts, names and labels) and *what* to run (an
:class:`ExecRequest`); a backend only knows *how* on its engine. A backend maps its
library's errors at its edge: a sandbox that vanished raises
:class:`~box_runtime.errors.BoxSandboxGoneError`, an engine problem raises
:class:`~box_runtime.errors.BoxBackendUnavailableError`, anything the request got wrong
raises :class:`~box_runtime.errors.BoxValidationError`.

``exec`` enforces the request's timeout itself and kills only that command (not the
sandbox), reporting ``timed_out``; it keeps at most ``output_limit`` bytes of each
stream (head and tail) while reading.

``spawn`` starts a long-lived process (a managed process, :class:`ProcessRequest`) and
hands back a :class:`SpawnedProcess`: its three byte streams, a way to wait for its
exit status and to signal its process group. The runtime owns everything above the
bytes (framing, buffers, stop order).
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Self

from anyio.abc import ByteReceiveStream, ByteSendStream

from box_runtime.artifacts import Artifact
from box_runtime.errors import BoxBackendUnavailableError, BoxValidationError
from box_runtime.export import ExportedFile, ExportLimits, SandboxFiles
from box_runtime.models import BoxSpec
from box_runtime.output import CollectedOutput
from box_runtime.quota import QuotaEnforcement

if TYPE_CHECKING:
    from box_runtime.config import BoxConfig

__all__ = [
    "ExecOutcome",
    "ExecRequest",
    "Mount",
    "ProcessRequest",
    "SandboxBackend",
    "SandboxPlan",
    "SpawnedProcess",
]


@dataclass(frozen=True, slots=True)
class Mount:
    """A bind mount; ``host_path`` is a real path that passed the mount checks."""

    host_path: str
    sandbox_path: str
    read_only: bool


@dataclass(frozen=True, slots=True)
class SandboxPlan:
    """Everything a backend needs to create one session's sandbox."""

    #: Stable, injective name of the session on the engine (container name).
    name: str
    #: SHA-256 hex of the session key (tenant, generation and the caller's id).
    key_hash: str
    session_id: str
    deployment_id: str
    image: str
    network: bool
    cpus: float
    memory_mb: int
    pids_limit: int
    read_only_rootfs: bool
    persistent: bool
    #: The workspace mount first, then the extra mounts.
    mounts: tuple[Mount, ...]
    mount_path: str
    #: Runtime-owned per-session directory on the host.
    session_dir: str
    #: Whether the workspace directory is runtime-owned (and may be chowned).
    workspace_owned: bool
    #: The session's scratch and home directories on the host (a backend that runs no
    #: long-lived sandbox mounts them at ``/tmp`` and the home directory).
    tmp_dir: str
    home_dir: str
    labels: Mapping[str, str] = field(default_factory=dict[str, str])
    #: How the workspace quota is enforced (see :mod:`box_runtime.quota`).
    quota_enforcement: QuotaEnforcement = "none"
    #: A per-file size cap for every sandbox process (``watch`` enforcement).
    max_file_bytes: int | None = None
    #: The resolved request the plan was made from (a backend written against the
    #: reference's interface, adapted by ``langbot_plugin.box.backend``, receives it).
    request: BoxSpec | None = None


@dataclass(frozen=True, slots=True)
class ExecRequest:
    command: str
    workdir: str
    env: Mapping[str, str]
    timeout_sec: float
    output_limit: int
    head_ratio: float
    #: Content-addressed mounts of this command only (verified copies; see
    #: :mod:`box_runtime.artifacts`). A backend with :attr:`SandboxBackend.artifact_view`
    #: finds them in the session's view instead.
    artifacts: tuple[Artifact, ...] = ()


@dataclass(frozen=True, slots=True)
class ExecOutcome:
    exit_code: int | None
    timed_out: bool
    stdout: CollectedOutput
    stderr: CollectedOutput


@dataclass(frozen=True, slots=True)
class ProcessRequest:
    """A long-lived process to start in a sandbox, its stdio kept open."""

    #: Stable, filesystem-safe name of the process inside its sandbox (hex).
    name: str
    argv: tuple[str, ...]
    cwd: str
    env: Mapping[str, str]
    #: Memory limit of the process in MiB; 0 means the sandbox's own limit.
    memory_mb: int = 0
    #: Content-addressed mounts the process sees for its whole life.
    artifacts: tuple[Artifact, ...] = ()


class SpawnedProcess(abc.ABC):
    """A running process: its byte streams, its exit status, signals to its group."""

    stdin: ByteSendStream
    stdout: ByteReceiveStream
    stderr: ByteReceiveStream
    #: Set by :meth:`wait` when the backend knows why the process ended early.
    exit_note: str = ""

    async def pump(self) -> None:  # noqa: B027 - optional: work the streams need while the process lives
        """Run whatever moves the bytes (a demultiplexer, say); returns when the streams end."""

    #: Writes what fits into stdin now, without waiting, and says how many bytes (a
    #: pipe's or socket's ``send_nowait``); ``None``: every message queues for :attr:`stdin`.
    send_nowait: Callable[[bytes], int] | None = None

    def write_nowait(self, data: bytes) -> int:
        """Write what fits into stdin now; how many bytes (0: the runtime queues the data)."""
        send = self.send_nowait
        return 0 if send is None else send(data)

    @abc.abstractmethod
    async def wait(self) -> int | None:
        """The exit status once the process ended (``None`` when it cannot be known)."""

    @abc.abstractmethod
    async def signal(self, signum: int) -> None:
        """Send ``signum`` to the process (its group where possible); gone is not an error."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release descriptors and connections (after the process ended)."""


class SandboxBackend(abc.ABC):
    """One sandbox technology. Instances are created per runtime and reused."""

    #: The backend's name (a class attribute; an adapter may set it per instance).
    name: str
    #: Whether ``SandboxPlan.image`` means anything (nsjail runs the host's files).
    custom_images: ClassVar[bool] = True
    #: Set by a backend that is not a sandbox (``host``): what the log and the backend
    #: info say about it.
    unsandboxed_warning: ClassVar[str | None] = None
    #: Whether the sandbox is one long-lived filesystem that mounts the session's
    #: artifact view (``SandboxPlan.mounts`` then holds it, read-only, at
    #: ``/opt/langbot-artifacts``) rather than mounting each command's artifacts itself.
    artifact_view: ClassVar[bool] = False

    @classmethod
    def from_config(cls, section: Any, config: BoxConfig) -> Self:
        """The backend configured by its ``box.<name>`` section (``config``: the whole
        configuration, for a backend that needs more of it)."""
        del config
        return cls(section)  # pyright: ignore[reportCallIssue]

    @abc.abstractmethod
    async def probe(self) -> str | None:
        """``None`` when usable, else a short reason why not."""

    async def service_problem(self) -> str | None:
        """Why a remote service the backend needs cannot serve now (unreachable, refuses
        the credentials), or ``None``; what ``/readyz`` reports beyond :meth:`probe`,
        which chooses the backend and stays local. Local backends have none."""
        return None

    async def image_problem(self, image: str, *, pull: bool = False) -> str | None:
        """Why sandboxes of ``image`` cannot start here (an engine without that image),
        or ``None``; with ``pull`` a backend that may fetch a missing image tries now.
        Backends without images have no such problem."""
        del image, pull
        return None

    @abc.abstractmethod
    async def start(self, plan: SandboxPlan) -> str:
        """Create (or adopt a persistent) sandbox; return its backend id."""

    @abc.abstractmethod
    async def exec(self, plan: SandboxPlan, handle: str, request: ExecRequest) -> ExecOutcome:
        """Run one command in the sandbox ``handle``."""

    @abc.abstractmethod
    async def stop(self, plan: SandboxPlan, handle: str) -> None:
        """Remove the sandbox; a sandbox that is already gone is not an error."""

    async def sees_host_mounts(self, plan: SandboxPlan, handle: str) -> bool:
        """Whether the sandbox sees mounts the runtime made below its session directory.

        A quota filesystem is a loop mount in the runtime's mount namespace; an engine in
        another namespace would bind the directory beneath it instead.
        """
        del plan, handle
        return True

    def storage_locations(
        self, plan: SandboxPlan, handle: str
    ) -> dict[str, tuple[str, tuple[str, ...]] | None]:
        """Where the sandbox's ``temp`` and ``caches`` live, for storage analysis.

        Each is ``(trusted root, parts below it)`` walked without following links, or
        ``None`` when this runtime cannot reach it. Blocking (a worker thread calls it).
        The default is the session directories a jail-style backend mounts.
        """
        del handle
        return {"temp": (plan.tmp_dir, ()), "caches": (plan.home_dir, (".cache",))}

    def sandbox_files(self, plan: SandboxPlan, handle: str) -> SandboxFiles | None:
        """Where the sandbox's files are on this host (explicit export), or ``None``.

        Blocking. The default fits a backend that runs the sandbox over the session's
        own directories: its mounts, and the session's ``tmp`` at ``/tmp``. ``None``
        means the files are not reachable from here; the backend then implements
        :meth:`export_remote` and :meth:`remove_remote`.
        """
        del handle
        roots = [(m.sandbox_path, m.host_path) for m in plan.mounts]
        roots.append(("/tmp", plan.tmp_dir))
        return SandboxFiles(tuple(roots), identity=None)

    async def export_remote(
        self, plan: SandboxPlan, handle: str, paths: list[str], limits: ExportLimits
    ) -> list[ExportedFile]:
        """Read files for export inside the sandbox (when :meth:`sandbox_files` is None)."""
        del plan, handle, paths, limits
        raise BoxBackendUnavailableError(f"the {self.name} backend cannot export files")

    async def remove_remote(
        self, plan: SandboxPlan, handle: str, path: str, sha256: str
    ) -> str | None:
        """Compare-and-delete inside the sandbox (when :meth:`sandbox_files` is None)."""
        del plan, handle, path, sha256
        raise BoxBackendUnavailableError(f"the {self.name} backend cannot remove files")

    async def spawn(
        self, plan: SandboxPlan, handle: str, request: ProcessRequest
    ) -> SpawnedProcess:
        """Start a managed process in the sandbox ``handle``."""
        del plan, handle, request
        raise BoxValidationError(f"the {self.name} backend cannot run managed processes")

    async def cleanup_orphans(self, deployment_id: str) -> list[str]:
        """Remove non-persistent sandboxes this deployment left behind; return their ids."""
        del deployment_id
        return []

    def protected_paths(self) -> tuple[str, ...]:
        """Host paths of the engine itself (data dir, sockets) that must never be mounted."""
        return ()

    async def aclose(self) -> None:  # noqa: B027 - an optional hook, a no-op by default
        """Release engine connections."""
