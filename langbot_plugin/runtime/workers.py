"""Worker processes for installed plugins, supervised.

Each installed plugin runs in its own process (``python -m langbot_plugin.worker``),
linked to the runtime over its stdin/stdout; everything it writes to stderr (log
records and stray prints) is captured into the plugin's :class:`LogBuffer`.

A worker that exits unexpectedly is restarted with exponential backoff; after
``failure_threshold`` failures within ``failure_window`` seconds the circuit opens and
the next attempt waits ``circuit_open`` seconds. Stopping is orderly: a ``shutdown``
notice, stdin closed, then terminate, then kill. A call in flight when the process
dies fails at once (the link closes), it never waits for its timeout.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from anyio.abc import Process, TaskGroup

from langbot_plugin.protocol.containers import PluginContainer, PluginSettings
from langbot_plugin.protocol.handshake import PluginWorkerPolicy
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.rpc import RPCError, RPCSession
from langbot_plugin.rpc.failures import log_failure
from langbot_plugin.rpc.processes import spawn_linked, stop_process
from langbot_plugin.rpc.tracing import child_env
from langbot_plugin.rpc.transport_stdio import pipe_transport
from langbot_plugin.runtime.confine import Launch, WorkerLaunch
from langbot_plugin.runtime.confine.watch import report_exhausted, watch_limits
from langbot_plugin.runtime.forwarding import plugin_table
from langbot_plugin.runtime.link import initialize
from langbot_plugin.runtime.logbuffer import LogBuffer, LogLine, parse_line
from langbot_plugin.runtime.plugins import PluginHandle, PluginPeer, shut_down
from langbot_plugin.runtime.state import RuntimeState
from langbot_plugin.runtime.template import TemplateError, alive
from langbot_plugin.runtime.worker_env import worker_env

__all__ = [
    "STOP_SEC",
    "RestartPolicy",
    "Restarts",
    "Supervisor",
    "WorkerError",
    "WorkerSpec",
    "alive",
    "pump_logs",
    "spawn_linked",
    "tail",
]

logger = logging.getLogger("langbot_plugin.runtime.workers")

#: Seconds a worker told to stop gets for each step of the stop order.
STOP_SEC = 3.0


class WorkerError(RPCError):
    """A worker could not be started; the message ends with its last log lines."""

    code = "worker_failed"


@dataclass(frozen=True, slots=True)
class RestartPolicy:
    failure_threshold: int = 8
    failure_window: float = 30.0
    circuit_open: float = 60.0
    first_backoff: float = 0.5
    max_backoff: float = 30.0
    ready_timeout: float = 120.0

    @classmethod
    def from_worker_policy(cls, policy: PluginWorkerPolicy) -> RestartPolicy:
        """The restart settings of the host's worker policy (the rest keeps its defaults)."""
        return cls(
            failure_threshold=policy.restart_failure_threshold,
            failure_window=policy.restart_failure_window_seconds,
            circuit_open=policy.restart_circuit_open_seconds,
        )


@dataclass(eq=False)
class Restarts:
    """When to start a process again after it exited: exponential backoff, and a pause
    of ``circuit_open`` seconds after ``failure_threshold`` exits within the window."""

    policy: RestartPolicy
    what: str
    #: called once for each restart (``lbp_rt_plugin_worker_restarts_total``)
    restarted: Callable[[], None] = lambda: None
    failures: list[float] = field(default_factory=list[float])
    delay: float = 0.0

    def wait_after_exit(self, began: float) -> float:
        policy, now = self.policy, time.monotonic()
        window = policy.failure_window
        self.failures = [t for t in self.failures if now - t < window] + [now]
        if not self.delay or now - began > window:
            self.delay = policy.first_backoff
        if len(self.failures) >= policy.failure_threshold:
            logger.error(
                "%s failed %d times in %.0f s; pausing restarts for %.0f s",
                self.what,
                len(self.failures),
                window,
                policy.circuit_open,
            )
            wait, self.failures = policy.circuit_open, []
        else:
            wait, self.delay = self.delay, min(policy.max_backoff, self.delay * 2)
        logger.warning("%s exited; restarting in %.1f s", self.what, wait)
        self.restarted()
        return wait


@dataclass
class WorkerSpec:
    """What to run: a plugin folder, on an interpreter, for one installation."""

    plugin_dir: Path
    python: str
    workspace: ActionScope
    binding: ActionScope
    settings: PluginSettings
    identity: str
    bridged: bool = False

    def handle(self, session: PluginPeer) -> PluginHandle:
        """The plugin's handle on ``session``, its container a placeholder named after
        the identity until the plugin describes itself."""
        name = self.identity.split("/")[-1]
        placeholder = {"manifest": {"manifest": {"metadata": {"name": name}}}}
        return PluginHandle(
            session=session,
            container=PluginContainer.model_validate(placeholder),
            debug=False,
            workspace=self.workspace,
            binding=self.binding,
            settings=self.settings,
            bridged=self.bridged,
        )


@dataclass(eq=False)
class _Worker:
    spec: WorkerSpec
    logs: LogBuffer
    process: Process | None = None
    handle: PluginHandle | None = None
    stopping: bool = False
    started: anyio.Event = field(default_factory=anyio.Event)
    start_error: BaseException | None = None
    done: anyio.Event = field(default_factory=anyio.Event)


class Supervisor:
    """Starts, watches and stops the workers of installed plugins."""

    def __init__(self, state: RuntimeState, policy: RestartPolicy | None = None) -> None:
        self.state = state
        self.policy = policy or RestartPolicy()
        self._workers: dict[str, _Worker] = {}
        self._tg: TaskGroup | None = None

    def bind(self, task_group: TaskGroup) -> None:
        self._tg = task_group

    def logs_for(self, identity: str) -> LogBuffer | None:
        worker = next((w for w in self._workers.values() if w.spec.identity == identity), None)
        return worker.logs if worker is not None else None

    def running(self, installation_uuid: str) -> bool:
        worker = self._workers.get(installation_uuid)
        return worker is not None and not worker.stopping

    def process(self, installation_uuid: str) -> Process | None:
        """The worker process of an installation now, if it has one."""
        worker = self._workers.get(installation_uuid)
        return worker.process if worker is not None else None

    def live_workers(self) -> int:
        """Worker processes running now (``lbp_rt_plugin_workers``)."""
        return sum(1 for w in self._workers.values() if alive(w.process))

    async def start(self, installation_uuid: str, spec: WorkerSpec) -> PluginHandle:
        """Start (or replace) the worker of an installation; return once it is initialized."""
        if self._tg is None:
            raise WorkerError("the supervisor is not running")
        previous = self._workers.get(installation_uuid)
        logs = previous.logs if previous is not None else LogBuffer()
        worker = _Worker(spec=spec, logs=logs)
        self._tg.start_soon(self._keep_running, worker)
        await worker.started.wait()
        if worker.start_error is not None or worker.handle is None:
            worker.stopping = True
            await self._stop_process(worker)
            raise WorkerError(
                f"plugin {spec.identity} did not start: {worker.start_error}\n"
                f"{tail(logs)}".rstrip(),
                details={"identity": spec.identity},
            )
        if previous is not None:
            await self._stop(previous)
        self._workers[installation_uuid] = worker
        return worker.handle

    async def stop(self, installation_uuid: str) -> None:
        worker = self._workers.pop(installation_uuid, None)
        if worker is not None:
            await self._stop(worker)

    async def stop_all(self) -> None:
        async with anyio.create_task_group() as tg:
            for uuid in list(self._workers):
                tg.start_soon(self.stop, uuid)

    # ----------------------------------------------------------------- internals

    async def _stop(self, worker: _Worker) -> None:
        worker.stopping = True
        await self._stop_process(worker)
        with anyio.move_on_after(10):
            await worker.done.wait()

    async def _stop_process(self, worker: _Worker) -> None:
        handle, process = worker.handle, worker.process
        if handle is not None:
            self.state.registry.remove(handle)
            await shut_down(handle.session, 3)
        if process is not None:
            # told to stop (shutdown, link closed): it gets the time to exit by itself
            await stop_process(process, stdin_grace=STOP_SEC, grace=STOP_SEC, release=False)

    async def _keep_running(self, worker: _Worker) -> None:
        identity = worker.spec.identity
        restarts = Restarts(
            self.policy, f"plugin {identity}", self.state.metrics.restarted(identity)
        )
        try:
            while not worker.stopping:
                began = time.monotonic()
                try:
                    await self._run_once(worker)
                except Exception as exc:
                    # Whatever the worker or the host sent: this worker goes down and
                    # comes back, the runtime and its other plugins serve on.
                    log_failure(logger, f"plugin {worker.spec.identity}", "its worker", exc)
                    await self._after_failure(worker, exc)
                if worker.stopping or not worker.started.is_set() or worker.start_error is not None:
                    return
                await anyio.sleep(restarts.wait_after_exit(began))
        finally:
            worker.done.set()

    async def _after_failure(self, worker: _Worker, exc: Exception) -> None:
        """Clean up after :meth:`_run_once` failed: the handle out of the registry, the
        process ended, a first start reported as failed."""
        if worker.handle is not None:
            self.state.registry.remove(worker.handle)
        process = worker.process
        if process is not None and process.returncode is None:
            await stop_process(process, stdin_grace=STOP_SEC, grace=STOP_SEC, release=False)
        if not worker.started.is_set():
            worker.start_error = exc
            worker.started.set()

    async def _run_once(self, worker: _Worker) -> None:
        """Run the process until it exits; the first run reports its start outcome."""
        spec = worker.spec
        folder = spec.plugin_dir.resolve()
        first = not worker.started.is_set()
        try:
            launch, process, from_child, from_parent = await spawn_confined(
                self.state,
                WorkerLaunch(
                    key=spec.binding.installation_uuid or spec.identity.replace("/", "__"),
                    identity=spec.identity,
                    python=spec.python,
                    args=["-m", "langbot_plugin.worker", "--plugin-dir", str(folder)],
                    read_only=[folder],
                    cwd=folder,
                    limits=self.state.options.confinement.limits_for(spec.identity),
                ),
            )
        except OSError as exc:
            worker.start_error = exc
            worker.started.set()
            return
        worker.process = process
        assert process.stderr is not None
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(pump_logs, process.stderr, worker.logs.add)
                tg.start_soon(watch_limits, launch, spec.identity, worker.logs.add)
                async with pipe_transport(
                    from_child, from_parent, frame_threshold=None
                ) as transport:
                    handle_box: list[PluginHandle] = []
                    routes = plugin_table(lambda _ctx: handle_box[0], self.state)
                    session = RPCSession(
                        transport, routes, name=spec.identity, file_chunk_bytes=1 << 20
                    )
                    tg.start_soon(session.serve)
                    await self._initialize(worker, session, handle_box, first)
                    await process.wait()
                    session.close()
                if worker.handle is not None:
                    self.state.registry.remove(worker.handle)
                tg.cancel_scope.cancel()
        finally:
            exhausted = None if worker.stopping else launch.exhausted()
            launch.close()
        if exhausted is not None:
            report_exhausted(exhausted, spec.identity, worker.logs.add)
        if first and not worker.started.is_set():
            worker.start_error = exhausted or WorkerError(
                f"exited with status {process.returncode}"
            )
            worker.started.set()
        logger.info("plugin %s worker exited (%s)", spec.identity, process.returncode)

    async def _initialize(
        self, worker: _Worker, session: RPCSession, box: list[PluginHandle], first: bool
    ) -> None:
        spec = worker.spec
        handle = spec.handle(session)
        box.append(handle)
        try:
            with anyio.fail_after(self.policy.ready_timeout):
                await initialize(handle)
        except Exception as exc:  # what the host or the worker answered: coded, logged once
            if first:
                worker.start_error = exc
                worker.started.set()
            log_failure(logger, f"plugin {spec.identity}", "initialize", exc)
            if worker.process is not None and worker.process.returncode is None:
                worker.process.kill()
            return
        worker.handle = handle
        self.state.registry.add(handle)
        worker.started.set()


async def pump_logs(stream: anyio.abc.ByteReceiveStream, sink: Callable[[LogLine], None]) -> None:
    """Feed each line a worker writes to stderr into ``sink``, parsed."""
    pending = b""
    async for chunk in stream:
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            if line.strip():
                sink(parse_line(line.decode("utf-8", "replace")))
    if pending.strip():
        sink(parse_line(pending.decode("utf-8", "replace")))


async def spawn_confined(
    state: RuntimeState, request: WorkerLaunch
) -> tuple[Launch, Process, int, int]:
    """Start a worker as the runtime's confinement says (:mod:`.confine`), with the
    allowlisted environment, linked on our pipes (:func:`spawn_linked`): its launch (to
    close once it has exited), the process and the runtime's two pipe ends. Raises
    :class:`OSError` if it cannot start, with nothing left open."""
    env = worker_env(state.options.worker_env) | child_env("lbp-worker")  # traces: OTEL_*
    launch = await state.confinement.launch(request, env)
    try:
        forked = await _forked(state, launch)
        if forked is not None:
            return (launch, *forked)
        process, from_child, from_parent = await spawn_linked(
            launch.command, launch.cwd, launch.env
        )
    except OSError:
        launch.close()
        raise
    return launch, process, from_child, from_parent


async def _forked(state: RuntimeState, launch: Launch) -> tuple[Process, int, int] | None:
    """The worker forked from the runtime's template (:mod:`.template`), where it can
    be: unconfined, ``python -m langbot_plugin.worker`` on the runtime's interpreter."""
    python, *args = launch.command
    if launch.jailed or args[:2] != ["-m", "langbot_plugin.worker"]:
        return None
    template = state.worker_template(python)
    if template is None:
        return None
    try:
        return await template.spawn(args[2:], launch.cwd, launch.env)
    except TemplateError as exc:
        logger.warning("worker template failed (%s); starting the worker afresh", exc)
        return None


def tail(logs: LogBuffer, count: int = 15) -> str:
    lines: list[LogLine] = logs.tail(count)
    return "\n".join(f"  {line.level} {line.text}" for line in lines)
