"""Docker backend through the Docker SDK's low-level API (calls run in worker threads).

A session is one long-lived, locked-down container (docs/box.md, *Docker*, lists how
it is created); an exec runs in one worker thread with no container inspect per exec,
through the in-container agent (:mod:`.docker_agent`) or ``docker exec``, its output
in bounded head+tail collectors (:mod:`.docker_io`), and a timeout kills exactly that
command's process group. Every engine call runs inside ``self._engine(action,
container)``, the one place SDK errors become Box errors (:mod:`.docker_errors`); a
Podman subclass inherits it.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, suppress
from typing import Any, ClassVar, cast

import anyio
import docker  # type: ignore[import-untyped]
from docker.types import Mount as DockerMount  # type: ignore[import-untyped]

from box_runtime.backends import docker_files
from box_runtime.backends.base import (
    ExecOutcome,
    ExecRequest,
    ProcessRequest,
    SandboxBackend,
    SandboxPlan,
    SpawnedProcess,
)
from box_runtime.backends.docker_agent import AGENT_SCRIPT, agent_script_text, run_via_agent
from box_runtime.backends.docker_connect import client_kwargs
from box_runtime.backends.docker_errors import (
    EngineConflictError,
    ImageMissingError,
    engine_errors,
    explain,
)
from box_runtime.backends.docker_io import (
    EXEC_WRAPPER,
    KILL_SCRIPT,
    Abort,
    Fifos,
    close_attached,
    demux_stream,
    open_dir,
    open_fifos,
    pump_fifos,
)
from box_runtime.backends.docker_user import hand_over, run_as
from box_runtime.config import DockerConfig
from box_runtime.errors import (
    BoxBackendUnavailableError,
    BoxError,
    BoxSandboxGoneError,
    BoxValidationError,
)
from box_runtime.export import ExportedFile, ExportLimits, Identity, SandboxFiles
from box_runtime.output import OutputCollector
from box_runtime.portable import effective_uid
from box_runtime.task_groups import single_error

__all__ = ["DockerBackend"]

logger = logging.getLogger("box_runtime.docker")
#: The API version a client starts with before it asks the engine for its own.
_MIN_API_VERSION = "1.24"


def _unix_socket_unreachable(kwargs: dict[str, Any]) -> str | None:
    """Why the engine's unix socket refuses a connection, or ``None`` (or not a socket).

    Checked before the SDK connects: docker-py leaks its socket when a connect fails.
    """
    url = str(kwargs.get("base_url") or "unix:///var/run/docker.sock")
    scheme, _, rest = url.partition("://")
    if scheme not in ("unix", "http+unix"):
        return None
    path = "/" + rest.lstrip("/")
    with socket.socket(socket.AF_UNIX) as probe:
        try:
            probe.connect(path)
        except OSError as exc:
            return f"{path}: {exc.strerror or exc}"
    return None


class DockerBackend(SandboxBackend):
    name = "docker"
    artifact_view = True
    #: How the engine is named in error messages (a Podman subclass says "podman").
    engine_name: ClassVar[str] = "docker"
    engine_label: ClassVar[str] = "Docker"

    def __init__(self, config: DockerConfig, *, max_threads: int = 96) -> None:
        self._config = config
        self._api: Any = None
        self._limiter = anyio.CapacityLimiter(max_threads)
        self._protected: tuple[str, ...] = ()
        #: container -> (its root through /proc, mount namespace), or None: use the stream.
        self._roots: dict[str, tuple[str, str] | None] = {}
        #: containers whose agent did not answer (docker exec is used for them).
        self._agent_ok: dict[str, bool] = {}

    # ------------------------------------------------------------------ plumbing

    def _connection(self) -> dict[str, Any]:
        """``docker.APIClient`` arguments: the address and TLS (see :mod:`.docker_connect`)."""
        return client_kwargs(self._config)

    def _client(self) -> Any:
        if self._api is None:
            kwargs = self._connection()
            tls = "tls" in kwargs
            api: Any
            with self._engine("connect"):
                if not tls:
                    api = docker.APIClient(timeout=120, max_pool_size=64, **kwargs)
                else:
                    # requests lets REQUESTS_CA_BUNDLE (set on many hosts) replace the
                    # CA we configured, per request; so no environment for this client,
                    # from its first request on (the version lookup).
                    api = docker.APIClient(
                        timeout=120, max_pool_size=64, version=_MIN_API_VERSION, **kwargs
                    )
                    api.trust_env = False
                    api._version = api._retrieve_server_version()
            self._api = api
        return self._api

    async def _run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await anyio.to_thread.run_sync(fn, *args, limiter=self._limiter)

    def _engine(self, action: str, handle: str | None = None) -> AbstractContextManager[None]:
        """Every engine call runs in here: SDK errors become Box errors (see docker_errors)."""
        return engine_errors(self.engine_name, action, handle)

    # ------------------------------------------------------------------ backend

    async def probe(self) -> str | None:
        def check() -> str | None:
            try:
                unreachable = _unix_socket_unreachable(self._connection())
                if unreachable is not None:
                    return f"no {self.engine_label} engine reachable ({unreachable})"
                api = self._client()
                api.ping()
                info = api.info()
            except Exception as exc:  # a probe never raises
                return f"no {self.engine_label} engine reachable ({explain(exc)})"
            root = info.get("DockerRootDir")
            socket_path = str(api.base_url)
            protected = [root] if isinstance(root, str) and root else []
            if socket_path.startswith("http+unix://"):
                protected.append("/" + socket_path.removeprefix("http+unix://").lstrip("/"))
            self._protected = tuple(protected)
            return None

        return cast(str | None, await self._run(check))

    def protected_paths(self) -> tuple[str, ...]:
        return self._protected

    async def image_problem(self, image: str, *, pull: bool = False) -> str | None:
        def check() -> str | None:
            try:
                with self._engine("inspect image"):
                    self._client().inspect_image(image)
                return None
            except ImageMissingError:
                pass
            except BoxError as exc:
                return exc.message
            if not (pull and self._config.pull_missing_images):
                return self._missing_image(image)
            try:
                self._pull(image)
            except BoxError as exc:
                return exc.message
            return None

        return cast(str | None, await self._run(check))

    async def start(self, plan: SandboxPlan) -> str:
        return cast(str, await self._run(self._start_blocking, plan))

    def _start_blocking(self, plan: SandboxPlan) -> str:
        api = self._client()
        config = self._config
        user = run_as(config.user, plan, box_uid=effective_uid())
        hand_over(user, plan)
        logger.info(
            "Box: session %s runs as %s (%s)",
            plan.session_id,
            user.user or "the image's user",
            user.why,
        )
        host_config = api.create_host_config(
            mounts=[
                DockerMount(m.sandbox_path, m.host_path, type="bind", read_only=m.read_only)
                for m in plan.mounts
            ],
            network_mode=config.network if plan.network else "none",
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            read_only=plan.read_only_rootfs,
            tmpfs={"/tmp": f"rw,nosuid,nodev,size={config.tmpfs_size_mb}m,mode=1777"},
            nano_cpus=int(plan.cpus * 1e9) if config.cpu_limit_enabled else None,
            mem_limit=f"{plan.memory_mb}m",
            memswap_limit=f"{plan.memory_mb}m",
            pids_limit=plan.pids_limit,
            init=config.init,
            ulimits=self._ulimits(plan) or None,
        )
        self._adjust_host_config(host_config)
        create = {
            "image": plan.image,
            "command": ["sh", "-c", AGENT_SCRIPT] if config.exec_agent else ["sleep", "infinity"],
            "name": plan.name,
            "labels": dict(plan.labels),
            "host_config": host_config,
            "working_dir": plan.mount_path,
            "user": user.user or None,
            "hostname": "box",
            "detach": True,
        }
        for attempt in range(3):
            try:
                with self._engine("create"):
                    container_id = str(api.create_container(**create)["Id"])
                break
            except ImageMissingError:
                if attempt or not config.pull_missing_images:
                    raise BoxValidationError(self._missing_image(plan.image)) from None
                self._pull(plan.image)
            except EngineConflictError:  # the name is taken
                if attempt == 2:
                    raise
                adopted = self._adopt_or_remove(plan)
                if adopted is not None:
                    return adopted
        else:  # pragma: no cover - the loop always breaks or raises
            raise BoxBackendUnavailableError(f"{self.engine_name} create failed")
        try:
            with self._engine("start", container_id):
                api.start(container_id)
        except BoxError:
            self._remove_quietly(container_id)
            raise
        return container_id

    def _ulimits(self, plan: SandboxPlan) -> list[dict[str, Any]]:
        """The container's ulimits (a Podman subclass adds its own)."""
        if not plan.max_file_bytes:
            return []
        return [{"Name": "fsize", "Soft": plan.max_file_bytes, "Hard": plan.max_file_bytes}]

    def _adjust_host_config(self, host_config: dict[str, Any]) -> None:
        """A hook for engine-specific host settings the SDK does not model."""

    def _missing_image(self, image: str) -> str:
        return (
            f"image {image} is not available on this {self.engine_label} engine; "
            "build it offline with "
            f"'lbp box image build --tag {image}' or pull it"
        )

    def _pull(self, image: str) -> None:
        repository, _, tag = (
            image.rpartition(":") if ":" in image.rsplit("/", 1)[-1] else (image, "", "")
        )
        logger.info("Box: pulling %s", image)
        try:
            with self._engine("pull"):
                self._client().pull(repository, tag=tag or "latest")
        except BoxError as exc:
            raise BoxValidationError(
                f"{self._missing_image(image)} (pull failed: {exc.message})"
            ) from None

    def _adopt_or_remove(self, plan: SandboxPlan) -> str | None:
        """A container of this name exists: adopt our persistent one, else remove it."""
        api = self._client()
        try:
            with self._engine("inspect", plan.name):
                existing = api.inspect_container(plan.name)
        except BoxSandboxGoneError:
            return None
        labels = existing.get("Config", {}).get("Labels") or {}
        targets = {str(m.get("Destination")) for m in existing.get("Mounts") or []}
        if (
            plan.persistent
            and labels.get("langbot.box.key") == plan.key_hash
            and labels.get("langbot.box.persistent") == "true"
            # A container made before the artifact view existed is made again.
            and all(m.sandbox_path in targets for m in plan.mounts)
        ):
            if not existing.get("State", {}).get("Running"):
                with self._engine("start", existing["Id"]):
                    api.start(existing["Id"])
            logger.info("Box: adopted persistent container %s", plan.name)
            return str(existing["Id"])
        self._remove_quietly(existing["Id"])
        return None

    def _remove_quietly(self, container: str) -> None:
        """Remove a container; one already gone (or being removed: 409) is no error."""
        with suppress(BoxSandboxGoneError, EngineConflictError), self._engine("remove", container):
            self._client().remove_container(container, force=True, v=True)

    async def stop(self, plan: SandboxPlan, handle: str) -> None:
        del plan
        self._roots.pop(handle, None)
        self._agent_ok.pop(handle, None)
        await self._run(self._remove_quietly, handle)

    async def sees_host_mounts(self, plan: SandboxPlan, handle: str) -> bool:
        """The container's workspace is the very filesystem we mounted (same device)."""

        def check() -> bool:
            found = self._find_root(handle)
            if found is None:
                return False  # a remote engine, or another pid namespace: cannot tell
            root = found[0]
            parts = [part for part in plan.mount_path.split("/") if part]
            try:
                fd = open_dir(root, *parts)
            except OSError:
                return False
            try:
                return os.fstat(fd).st_dev == os.stat(plan.mounts[0].host_path).st_dev
            finally:
                os.close(fd)

        return cast(bool, await self._run(check))

    def storage_locations(
        self, plan: SandboxPlan, handle: str
    ) -> dict[str, tuple[str, tuple[str, ...]] | None]:
        """The container's ``/tmp`` and ``/root/.cache``, through its ``/proc`` root."""
        del plan
        found = self._find_root(handle)
        if found is None:
            return {"temp": None, "caches": None}  # a remote engine: not reachable from here
        return {"temp": (found[0], ("tmp",)), "caches": (found[0], ("root", ".cache"))}

    def _user(self, handle: str) -> Identity:
        """The rights the container's processes run with (its effective ``User``)."""
        with self._engine("inspect", handle):
            details = self._client().inspect_container(handle)
        return docker_files.identity(str((details.get("Config") or {}).get("User") or ""))

    def sandbox_files(self, plan: SandboxPlan, handle: str) -> SandboxFiles | None:
        """The container's whole tree through ``/proc/<pid>/root`` (local engines only)."""
        del plan
        found = self._find_root(handle) if self._config.fast_output else None
        if found is None:
            return None
        return SandboxFiles((("/", found[0]),), self._user(handle))

    async def export_remote(
        self, plan: SandboxPlan, handle: str, paths: list[str], limits: ExportLimits
    ) -> list[ExportedFile]:
        del plan

        def read() -> list[ExportedFile]:
            return docker_files.export_through_engine(
                self._client(), self._engine, handle, paths, limits=limits
            )

        return cast(list[ExportedFile], await self._run(read))

    async def remove_remote(
        self, plan: SandboxPlan, handle: str, path: str, sha256: str
    ) -> str | None:
        del plan
        remove = docker_files.remove_through_engine
        kept = await self._run(remove, self._client(), self._engine, handle, path, sha256)
        return cast(str | None, kept)

    async def cleanup_orphans(self, deployment_id: str) -> list[str]:
        def cleanup() -> list[str]:
            api = self._client()
            with self._engine("list"):
                found = api.containers(
                    all=True, filters={"label": [f"langbot.box.deployment={deployment_id}"]}
                )
            removed: list[str] = []
            for container in found:
                labels = container.get("Labels") or {}
                if labels.get("langbot.box.persistent") == "true":
                    continue
                self._remove_quietly(container["Id"])
                removed.append(str(container["Id"]))
            return removed

        return cast(list[str], await self._run(cleanup))

    async def aclose(self) -> None:
        api, self._api = self._api, None
        if api is not None:
            await self._run(api.close)

    # ------------------------------------------------------------------ managed processes

    async def spawn(
        self, plan: SandboxPlan, handle: str, request: ProcessRequest
    ) -> SpawnedProcess:
        """A managed process: ``docker exec`` attached with stdin (see :mod:`.docker_process`)."""
        from box_runtime.backends.docker_process import spawn_process

        if request.memory_mb:
            logger.warning(
                "Box: memory_mb=%d of a managed process is not a limit of its own on Docker; "
                "the session container's %d MiB apply to all its processes",
                request.memory_mb,
                plan.memory_mb,
            )
        if self._config.exec_agent:
            process = await self._spawn_via_agent(handle, request)
            if process is not None:
                return process
        return await spawn_process(self._client(), self._run, self._engine, handle, request)

    async def _spawn_via_agent(self, handle: str, request: ProcessRequest) -> SpawnedProcess | None:
        """The agent's start (no engine call) when the container's ``/tmp`` is reachable."""
        from box_runtime.backends.docker_agent_process import spawn_via_agent
        from box_runtime.backends.docker_process import pid_file_of, signal_blocking

        if handle in self._roots:  # known: a readlink, no engine call
            root = self.local_root(handle)
        else:
            root = cast(str | None, await self._run(self.local_root, handle))
        if root is None:
            return None
        pid_file = pid_file_of(request)
        process = await spawn_via_agent(root, secrets.token_hex(8), request, pid_file)
        if process is not None:
            api = self._client()

            async def send_signal(signum: int) -> None:
                await self._run(signal_blocking, api, handle, pid_file, signum)

            process.signal_via = send_signal
        return process

    # ------------------------------------------------------------------ exec

    async def exec(self, plan: SandboxPlan, handle: str, request: ExecRequest) -> ExecOutcome:
        """Run the command in a worker thread; a cancelled call returns once it is killed.

        Cancelling the caller fires the exec's :class:`Abort`: the thread stops reading,
        kills the command's process group and returns, and only then does the
        cancellation go on, so the session's next command never overlaps a dying one.
        """
        del plan
        abort = Abort()

        async def abort_when_cancelled() -> None:
            try:
                await anyio.sleep_forever()
            finally:
                abort.fire()

        outcome: ExecOutcome | None = None
        with single_error():
            async with anyio.create_task_group() as tg:
                tg.start_soon(abort_when_cancelled)
                try:
                    outcome = await anyio.to_thread.run_sync(
                        self._exec_blocking, handle, request, abort, limiter=self._limiter
                    )
                finally:
                    tg.cancel_scope.cancel()
        assert outcome is not None  # the thread either returned or raised
        return outcome

    def _exec_blocking(self, handle: str, request: ExecRequest, abort: Abort) -> ExecOutcome:
        token = secrets.token_hex(8)
        stdout = OutputCollector(request.output_limit, request.head_ratio)
        stderr = OutputCollector(request.output_limit, request.head_ratio)
        deadline = time.monotonic() + request.timeout_sec
        root = self.local_root(handle)
        if root is not None and self._config.exec_agent and self._agent_ok.get(handle, True):
            script = agent_script_text(request.workdir, request.env, request.command)
            ran = run_via_agent(
                root, token, script, stdout=stdout, stderr=stderr, deadline=deadline, abort=abort
            )
            if ran is not None:
                timed_out, exit_code = ran
                if timed_out or abort.requested:
                    self._kill(handle, token, aborted=abort.requested)
                    return ExecOutcome(None, True, stdout.result(), stderr.result())
                return ExecOutcome(exit_code, False, stdout.result(), stderr.result())
            self._agent_ok[handle] = False  # no agent in this container: docker exec from now on
        fifos: Fifos | None = None
        if root is not None:
            try:
                fifos = open_fifos(root, token)
            except OSError:
                fifos = None
        return self._docker_exec(handle, request, token, fifos, (stdout, stderr, deadline, abort))

    def _docker_exec(
        self,
        handle: str,
        request: ExecRequest,
        token: str,
        fifos: Fifos | None,
        io: tuple[OutputCollector, OutputCollector, float, Abort],
    ) -> ExecOutcome:
        api = self._client()
        stdout, stderr, deadline, abort = io
        flag = "1" if fifos is not None else ""
        command = ["sh", "-c", EXEC_WRAPPER, "sh", token, request.workdir, request.command, flag]
        try:
            try:
                with self._engine("exec", handle):
                    exec_id = api.exec_create(
                        handle, command, environment=[f"{k}={v}" for k, v in request.env.items()]
                    )["Id"]
                    sock = api.exec_start(exec_id, socket=True)
            except EngineConflictError:  # the container exists but is not running
                raise BoxSandboxGoneError(f"container {handle[:12]} is not running") from None
            raw: socket.socket = getattr(sock, "_sock", sock)
            abort.attach(raw)
            try:
                if fifos is not None:
                    timed_out = pump_fifos(
                        fifos, raw, stdout=stdout, stderr=stderr, deadline=deadline, abort=abort
                    )
                else:
                    timed_out = demux_stream(
                        raw, stdout=stdout, stderr=stderr, deadline=deadline, abort=abort
                    )
            finally:
                close_attached(sock)
        finally:
            if fifos is not None:
                fifos.close()
        if timed_out or abort.requested:
            self._kill(handle, token, aborted=abort.requested)
            return ExecOutcome(None, True, stdout.result(), stderr.result())
        exit_code = self._exit_code(handle, exec_id)
        return ExecOutcome(exit_code, False, stdout.result(), stderr.result())

    def local_root(self, handle: str) -> str | None:
        """The container's filesystem through ``/proc`` (fast paths), or ``None``.

        ``None`` for an engine on another machine (or in another pid namespace): the
        execs then use the engine's stream, export the engine's archive API.
        """
        if not self._config.fast_output:
            return None
        if handle not in self._roots:
            self._roots[handle] = self._find_root(handle)
        found = self._roots[handle]
        if found is None:
            return None
        path, namespace = found
        with suppress(OSError):
            if os.readlink(os.path.join(os.path.dirname(path), "ns", "mnt")) == namespace:
                return path
        del self._roots[handle]  # the container stopped or restarted: look again next time
        return None

    def _find_root(self, handle: str) -> tuple[str, str] | None:
        """``(/proc/<pid>/root, its mount namespace)`` of the container's init, if reachable.

        The pid comes from the engine's pid namespace; it is used only when ours is the
        same, which the process's cgroup naming this container proves (a runtime inside
        another container sees other processes under those numbers, or none).
        """
        try:
            with self._engine("inspect", handle):
                details = self._client().inspect_container(handle)
            container_id, pid = str(details["Id"]), int(details["State"]["Pid"])
            if pid <= 0:
                return None
            proc = f"/proc/{pid}"
            with open(f"{proc}/cgroup", encoding="utf-8") as cgroups:
                if container_id not in cgroups.read():
                    return None
            namespace = os.readlink(f"{proc}/ns/mnt")
            if not os.access(f"{proc}/root/tmp", os.W_OK):
                return None
        except (BoxError, OSError, KeyError, TypeError, ValueError):
            return None
        return f"{proc}/root", namespace

    def _exit_code(self, handle: str, exec_id: str) -> int | None:
        api = self._client()
        for _ in range(200):
            with self._engine("exec inspect", handle):
                state = api.exec_inspect(exec_id)
            if not state.get("Running"):
                code = state.get("ExitCode")
                return int(code) if code is not None else None
            time.sleep(0.002)  # the stream ended a moment before docker recorded the exit
        return None

    def _kill(self, handle: str, token: str, *, aborted: bool) -> None:
        api = self._client()
        try:
            with self._engine("kill", handle):
                kill_id = api.exec_create(handle, ["sh", "-c", KILL_SCRIPT, "lbp-kill", token])
                api.exec_start(kill_id["Id"])
        except BoxError as exc:
            # An aborted command's container is often being removed (its session was
            # deleted): the removal ends the command, so the failed kill is no news.
            log = logger.debug if aborted else logger.warning
            log("Box: could not kill a command in %s: %s", handle[:12], exc)
