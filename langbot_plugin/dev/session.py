"""The ``lbp dev`` session driver: host machinery + runtime + the plugin, and its runs as events.

:class:`DevSession` is the one object every front end uses (the terminal chat,
``--message``/``--json``, the web page, and tests)::

    async with DevSession(Path("my_plugin"), model=echo_model()) as dev:
        dev.events.subscribe(print)            # every DevEvent, as it happens
        outcome = await dev.send("hi")         # one agent run -> RunOutcome
        replies = await dev.command("hello bob")
        result = await dev.call_tool("add", {"a": 1, "b": 2})
        await dev.emit_event("PersonMessageReceived", {...})
        dev.reset()                            # a new conversation

What it starts, all on 127.0.0.1 and stopped in reverse order:

1. a :class:`~langbot_plugin.host.LocalHost` (the host side: the model, the plugin's
   own tools offered to its runner, storage, runner state and transcript on SQLite
   under the state folder), connected to
2. the plugin runtime (``lbp rt``'s :class:`~langbot_plugin.runtime.app.PluginRuntime`,
   in this process, over an in-memory control link; its debug port on a free port),
   which hands out a debug key, used by
3. ``lbp run`` for the plugin folder, a child process: the plugin runs in its own
   process as under LangBot, with ``lbp run``'s hot reload (a save that does not load
   is reported as ``plugin.broken`` and the last good version keeps serving).

The state folder (default ``<plugin>/.lbp-dev``) keeps plugin and workspace storage,
runner state, the transcript and the runtime's data between sessions; ``fresh=True``
clears it first.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import sys
import threading
from collections.abc import AsyncGenerator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, Self

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.abc import Process, TaskGroup
from anyio.streams.buffered import BufferedByteReceiveStream
from anyio.streams.memory import MemoryObjectSendStream

from langbot_plugin.dev.event_fields import event_fields
from langbot_plugin.dev.events import EventHub, LogRecordParser
from langbot_plugin.dev.models import echo_model
from langbot_plugin.dev.processes import free_port, stop_process
from langbot_plugin.dev.storage import PersistentStorage
from langbot_plugin.host import LocalHost, PluginRuntimeClient, RunHost, RunOutcome
from langbot_plugin.host.results import NormalizedResult
from langbot_plugin.host.run_context import make_resources
from langbot_plugin.host.scripted import HostModel, HostTool
from langbot_plugin.protocol.host_link import GET_PLUGIN_SETTINGS, INITIALIZE_PLUGIN_SETTINGS
from langbot_plugin.rpc import RequestContext, Route
from langbot_plugin.rpc.routes import preceded_by
from langbot_plugin.rpc.transport_memory import memory_pair
from langbot_plugin.runtime.app import PluginRuntime
from langbot_plugin.runtime.data_lock import LOCK_FILE, DataDirBusyError, hold_data_dir
from langbot_plugin.runtime.plugins import PluginHandle, PluginRegistry
from langbot_plugin.runtime.state import RuntimeOptions

__all__ = ["DEFAULT_STATE_DIR", "DevError", "DevSession", "component_name", "runner_config"]

logger = logging.getLogger("langbot_plugin.dev")

DEFAULT_STATE_DIR = ".lbp-dev"
READY_SECONDS = 60.0
#: Host actions not worth a ``host.call`` event (the registration handshake).
QUIET_ACTIONS = frozenset({INITIALIZE_PLUGIN_SETTINGS.name, GET_PLUGIN_SETTINGS.name})
#: Config item types that name a model: the session's model is filled in.
MODEL_SELECTORS = frozenset({"llm-model-selector", "model-selector"})


class DevError(Exception):
    """The session cannot start (or go on); ``lines`` say why, ``usage`` whether it is
    the author's input (a plugin that does not load, a runner that does not exist)."""

    def __init__(self, message: str, lines: Sequence[str] = (), *, usage: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.lines = list(lines)
        self.usage = usage


def runner_config(
    manifest: dict[str, Any], model_uuid: str, overrides: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A runner's config as a pipeline would hold it: each item's default, the session's
    model in model selectors, then ``overrides``. ``manifest`` is the runner's listing
    (``config_schema``) or its component manifest (``spec.config``)."""
    config: dict[str, Any] = {}
    items = manifest.get("config_schema") or (manifest.get("spec") or {}).get("config") or []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or not item.get("name"):
            continue
        name, kind = str(item["name"]), str(item.get("type") or "")
        value = item.get("default")
        if kind in MODEL_SELECTORS:
            value = model_uuid
        elif kind == "model-fallback-selector":
            value = {"primary": model_uuid, "fallbacks": []}
        config[name] = value
    config.update(overrides or {})
    return config


def component_name(entry: dict[str, Any]) -> str:
    """The name of a listed tool or command (``manifest.metadata.name``)."""
    return str(((entry.get("manifest") or {}).get("metadata") or {}).get("name") or "")


class DevSession:
    """Host machinery, runtime and one plugin folder, driven as a chat (module docstring)."""

    def __init__(
        self,
        root: Path,
        *,
        model: HostModel | None = None,
        runner: str | None = None,
        config: dict[str, Any] | None = None,
        state_dir: Path | None = None,
        fresh: bool = False,
        hot_reload: bool = True,
        host_tools: Sequence[HostTool] = (),
        lbp_command: Sequence[str] | None = None,
        ready_seconds: float = READY_SECONDS,
    ) -> None:
        self.root = root.resolve()
        self.model: HostModel = model or echo_model()
        self.requested_runner = runner
        self.config_overrides = dict(config or {})
        self.state_dir = (state_dir or self.root / DEFAULT_STATE_DIR).resolve()
        self.fresh = fresh
        self.hot_reload = hot_reload
        self.extra_tools = list(host_tools)
        self.lbp_command = list(
            lbp_command or [sys.executable, "-m", "langbot_plugin.cli.__init__"]
        )
        self.ready_seconds = ready_seconds
        self.events = EventHub()
        self.author = ""
        self.name = ""
        self.runners: list[dict[str, Any]] = []
        self.tools: list[dict[str, Any]] = []
        self.commands: list[dict[str, Any]] = []
        self.runner: str | None = None
        self.conversation_id = ""
        self._stack = AsyncExitStack()
        self._runtime: PluginRuntime | None = None
        self._client: PluginRuntimeClient | None = None
        self._process: Process | None = None
        self._output: list[str] = []
        self._exited = anyio.Event()
        self._closing = False
        self._query_id = 0
        self._plugin_tool_names: set[str] = set()
        self.local: LocalHost | None = None

    # ------------------------------------------------------------------ identity

    @property
    def identity(self) -> str:
        return f"{self.author}/{self.name}"

    @property
    def client(self) -> PluginRuntimeClient:
        if self._client is None:
            raise RuntimeError("the session is not running")
        return self._client

    @property
    def host(self) -> LocalHost:
        if self.local is None:
            raise RuntimeError("the session is not running")
        return self.local

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> Self:
        try:
            await self._start()
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._stack.aclose()

    async def _start(self) -> None:
        self._hold_state_dir()
        self._load_conversation()
        storage = PersistentStorage(self.state_dir / "storage.sqlite3")
        self._stack.callback(storage.close)
        runs = RunHost(self.state_dir / "host.sqlite3")
        self._stack.callback(runs.close)
        self.local = LocalHost(models={self.model.model_uuid: self.model}, runs=runs)
        self.local.storage = storage
        for tool in self.extra_tools:
            self.local.add_tool(self._watched(tool))

        tg = await self._stack.enter_async_context(anyio.create_task_group())
        self._stack.callback(tg.cancel_scope.cancel)  # runs after the children stopped
        await self._stack.enter_async_context(self._runtime_logs(tg))
        runtime = PluginRuntime(
            RuntimeOptions(
                host="127.0.0.1",
                control_port=free_port(),
                debug_port=free_port(),
                control_token=secrets.token_urlsafe(32),
                data_dir=self.state_dir / "runtime",
            )
        )
        self._runtime = runtime
        tg.start_soon(runtime.run)
        self._stack.callback(runtime.stop)
        await runtime.wait_started()
        host_side, runtime_side = memory_pair()
        tg.start_soon(runtime.serve_control, runtime_side, "lbp-dev")
        self._client = await self._stack.enter_async_context(
            PluginRuntimeClient.over(host_side, _Announcing(self.local, self))
        )
        key = await self._client.get_debug_key()
        await self._stack.enter_async_context(self._plugin_process(tg, key))
        await self._wait_registered()
        await self._refresh("plugin.ready")
        tg.start_soon(self._watch_reloads)

    @asynccontextmanager
    async def _runtime_logs(self, tg: TaskGroup) -> AsyncGenerator[None]:
        """The in-process runtime's log records (warnings and up) as ``log`` events."""
        send, receive = anyio.create_memory_object_stream[dict[str, Any]](1000)
        handler = _EventLogHandler(send)
        target = logging.getLogger("langbot_plugin.runtime")
        target.addHandler(handler)

        async def forward() -> None:
            async with receive:
                async for record in receive:
                    await self.events.emit("log", {"source": "runtime", **record})

        tg.start_soon(forward)
        try:
            yield
        finally:
            target.removeHandler(handler)
            send.close()

    def _hold_state_dir(self) -> None:
        """One session per state folder (they would share databases and the runtime's
        data); ``fresh`` empties it once it is ours."""
        try:
            lock = hold_data_dir(self.state_dir, wait_seconds=0)
        except DataDirBusyError:
            raise DevError(
                f"{self.state_dir} is in use by another lbp dev; stop it, or give this one "
                "its own --state-dir",
                usage=False,
            ) from None
        if lock is not None:
            self._stack.callback(lock.close)
        if self.fresh:
            for entry in self.state_dir.iterdir():
                if entry.name == LOCK_FILE:
                    continue
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry)
                else:
                    entry.unlink()

    def _load_conversation(self) -> None:
        marker = self.state_dir / "conversation.json"
        try:
            self.conversation_id = str(json.loads(marker.read_text())["conversation_id"])
        except (OSError, ValueError, KeyError, TypeError):
            self.conversation_id = f"dev-{secrets.token_hex(4)}"
            self._save_conversation()

    def _save_conversation(self) -> None:
        marker = self.state_dir / "conversation.json"
        marker.write_text(json.dumps({"conversation_id": self.conversation_id}) + "\n")

    # ------------------------------------------------------------------ the plugin process

    @asynccontextmanager
    async def _plugin_process(self, tg: TaskGroup, key: str) -> AsyncGenerator[None]:
        assert self._runtime is not None
        url = f"ws://127.0.0.1:{self._runtime.options.debug_port}/plugin/debug/ws"
        command = [*self.lbp_command, "run", "-d", str(self.root), "--runtime-url", url]
        if not self.hot_reload:
            command.append("--no-reload")
        env = {
            **os.environ,
            "PLUGIN_DEBUG_KEY": key,
            "PYTHONUNBUFFERED": "1",
            "LBP_LOG_LEVEL": "info",
        }
        process = await anyio.open_process(command, env=env, cwd=self.root)
        self._process = process
        assert process.stdout is not None
        assert process.stderr is not None
        async with anyio.create_task_group() as readers:
            readers.start_soon(self._read_output, process.stdout)
            readers.start_soon(self._read_output, process.stderr)
            tg.start_soon(self._reap, process)
            try:
                yield
            finally:
                self._closing = True
                with anyio.CancelScope(shield=True):
                    await stop_process(process)

    async def _reap(self, process: Process) -> None:
        code = await process.wait()
        self._exited.set()
        if not self._closing:
            await self.events.emit("plugin.exited", {"code": code})

    async def _read_output(self, stream: Any) -> None:
        buffered = BufferedByteReceiveStream(stream)
        parser = LogRecordParser()
        while True:
            line = b""
            with anyio.move_on_after(0.2 if parser.pending is not None else float("inf")) as quiet:
                try:
                    line = await buffered.receive_until(b"\n", 1 << 20)
                except anyio.DelimiterNotFound:  # a line over 1 MiB: take it in pieces
                    line = await buffered.receive(1 << 20)
                except (anyio.EndOfStream, anyio.IncompleteRead, anyio.ClosedResourceError):
                    for record in parser.flush():
                        await self._log(record)
                    return
            if quiet.cancelled_caught:  # quiet for a moment: the record being collected is done
                for record in parser.flush():
                    await self._log(record)
                continue
            text = line.decode("utf-8", "replace").rstrip("\r")
            self._output.append(text)
            del self._output[:-200]
            for record in parser.feed(text):
                await self._log(record)

    async def _log(self, record: dict[str, Any]) -> None:
        await self.events.emit("log", {"source": "plugin", **record})
        if record["level"] == "ERROR" and "cannot be loaded" in record["text"]:
            await self.events.emit("plugin.broken", {"text": record["text"]})

    async def _wait_registered(self) -> None:
        assert self._runtime is not None
        registry = self._runtime.state.registry
        await self._until_registered(self.ready_seconds)
        if len(registry) > 0:
            return
        lines = [line for line in self._output if line.strip()]
        if self._exited.is_set():
            problems = [line.removeprefix("lbp run: ") for line in lines if "lbp run:" in line]
            if problems:
                raise DevError(problems[0], problems[1:])
            raise DevError("the plugin process ended before it registered", lines[-10:])
        raise DevError(
            f"the plugin did not register within {self.ready_seconds:.0f} s",
            lines[-10:],
            usage=False,
        )

    async def _refresh(self, kind: str) -> None:
        """Read what the plugin offers now; choose the runner; offer its tools to runs."""
        client = self.client
        assert self._runtime is not None
        handle = next(iter(self._runtime.state.registry), None)
        if handle is None:
            raise DevError("the plugin is not registered", usage=False)
        self.author, self.name = handle.author, handle.name
        self.runners = await client.list_runners()
        self.tools = await client.list_tools()
        self.commands = await client.list_commands()
        names = [str(r["manifest"]["name"]) for r in self.runners]
        if self.requested_runner is not None and self.requested_runner not in names:
            known = ", ".join(names) or "none"
            raise DevError(f"the plugin has no runner {self.requested_runner!r} (runners: {known})")
        self.runner = self.requested_runner or (names[0] if names else None)
        local = self.host
        for name in self._plugin_tool_names:
            local.tools.pop(name, None)
        self._plugin_tool_names = {component_name(t) for t in self.tools}
        for tool in self.tools:
            local.add_tool(self._plugin_tool(tool))
        await self.events.emit(kind, self.describe())

    def describe(self) -> dict[str, Any]:
        """What the session serves: the plugin, its runners, tools and commands."""
        return {
            "identity": self.identity,
            "runners": [str(r["manifest"]["name"]) for r in self.runners],
            "runner": self.runner,
            "tools": [component_name(t) for t in self.tools],
            "commands": [component_name(c) for c in self.commands],
            "host_tools": [t.name for t in self.extra_tools],
            "conversation_id": self.conversation_id,
            "model": self.model.model_uuid,
        }

    async def _watch_reloads(self) -> None:
        assert self._runtime is not None
        registry = self._runtime.state.registry
        current = next(iter(registry), None)
        while True:
            seen = current

            def replaced(r: PluginRegistry, seen: PluginHandle | None = seen) -> bool:
                return next(iter(r), None) not in (None, seen)

            await registry.wait_for(replaced)
            current = next(iter(registry), None)
            try:
                await self._refresh("plugin.reloaded")
            except DevError as exc:
                await self.events.emit("plugin.broken", {"text": exc.message})

    async def _until_registered(self, seconds: float) -> None:
        """Wait (bounded) until the plugin is registered or its process has ended."""
        assert self._runtime is not None
        registry = self._runtime.state.registry
        if len(registry) > 0 or self._exited.is_set():
            return
        with anyio.move_on_after(seconds):
            async with anyio.create_task_group() as tg:

                async def registered() -> None:
                    await registry.wait_for(lambda r: len(r) > 0)
                    tg.cancel_scope.cancel()

                async def exited() -> None:
                    await self._exited.wait()
                    tg.cancel_scope.cancel()

                tg.start_soon(registered)
                tg.start_soon(exited)

    async def wait_ready(self, seconds: float = 30.0) -> None:
        """Wait (bounded) for the plugin to be registered: it is absent for a moment
        while a reload reconnects."""
        assert self._runtime is not None
        registry = self._runtime.state.registry
        await self._until_registered(seconds)
        if self._exited.is_set():
            raise DevError("the plugin process has ended (see its log)", usage=False)
        if len(registry) == 0:
            raise DevError("the plugin is not connected (see its log)", usage=False)

    # ------------------------------------------------------------------ tools offered to runs

    def _plugin_tool(self, tool: dict[str, Any]) -> HostTool:
        name = component_name(tool)
        manifest = tool.get("manifest") or {}
        spec = manifest.get("spec") or {}
        description = (manifest.get("metadata") or {}).get("description") or {}

        async def call(parameters: dict[str, Any]) -> Any:
            return await self.client.call_tool(
                name, parameters, session=self._session_info(), query_id=self._next_query()
            )

        hosted = HostTool(
            name=name,
            function=call,
            description=str(spec.get("llm_prompt") or description.get("en_US") or ""),
            parameters=spec.get("parameters") or {"type": "object", "properties": {}},
        )
        return self._watched(hosted)

    def _watched(self, tool: HostTool) -> HostTool:
        inner = tool.function

        async def function(parameters: dict[str, Any]) -> Any:
            await self.events.emit("tool.call", {"name": tool.name, "arguments": parameters})
            try:
                result = inner(parameters)
                if hasattr(result, "__await__"):
                    result = await result
            except Exception as exc:
                await self.events.emit("tool.result", {"name": tool.name, "error": str(exc)})
                raise
            await self.events.emit("tool.result", {"name": tool.name, "result": result})
            return result

        tool.function = function
        return tool

    # ------------------------------------------------------------------ the conversation

    def _next_query(self) -> int:
        self._query_id += 1
        return self._query_id

    def _session_info(self) -> dict[str, Any]:
        return {"launcher_type": "person", "launcher_id": "dev-user", "sender_id": "dev-user"}

    def _resources(self, manifest: dict[str, Any]) -> dict[str, Any]:
        """What LangBot would grant the runner: each model and tool, with the operations
        its manifest asks for (``permissions``), never more."""
        permissions = manifest.get("permissions") or {}
        model_ops = [str(op) for op in permissions.get("models") or []]
        tool_ops = [str(op) for op in permissions.get("tools") or []]
        local = self.host
        return make_resources(
            models=dict.fromkeys(local.models, model_ops) if model_ops else None,
            tools=dict.fromkeys(local.tools, tool_ops) if tool_ops else None,
            plugin_storage=True,
            workspace_storage=True,
        )

    def _runner_manifest(self) -> dict[str, Any]:
        for entry in self.runners:
            if entry["manifest"]["name"] == self.runner:
                return dict(entry["manifest"])
        raise DevError("the plugin has no agent runner: add one with 'lbp comp AgentRunner'")

    async def send(self, text: str) -> RunOutcome:
        """One agent run of the chosen runner on ``text``; its results are emitted as
        they arrive, ``run.ended`` last."""
        await self.wait_ready()
        if self.runner is None:
            raise DevError("the plugin has no agent runner: add one with 'lbp comp AgentRunner'")
        manifest = self._runner_manifest()
        local = self.host
        started = await local.start_run(
            self.identity,
            self.runner,
            text,
            conversation_id=self.conversation_id,
            launcher_id="dev-user",
            sender_name="Developer",
            resources=self._resources(manifest),
            config=runner_config(manifest, self.model.model_uuid, self.config_overrides),
        )
        run_id = started.run_id
        await self.events.emit(
            "run.started",
            {"text": text, "runner": self.runner, "conversation_id": self.conversation_id},
            run_id,
        )

        async def on_result(result: NormalizedResult) -> None:
            await self.events.emit(
                result.type,
                {
                    "type": result.type,
                    "sequence": result.sequence,
                    "data": result.data,
                    "usage": result.usage,
                    "text": result.text,
                },
                run_id,
            )

        deadline = started.session.deadline_at
        idle = 300.0 if deadline is None else max(deadline - local.runs.clock(), 0.0) + 1.0
        items = self.client.run_runner(
            self.author, self.name, self.runner, started.context, timeout=idle
        )
        outcome = await local.runs.drive(started, items, on_result=on_result)
        await self.events.emit(
            "run.ended",
            {
                "status": outcome.status,
                "text": outcome.text,
                "usage": outcome.usage,
                "error": outcome.error,
            },
            run_id,
        )
        return outcome

    async def command(self, text: str) -> list[str]:
        """Run ``!text`` (``name args...``); the texts of its replies."""
        await self.wait_ready()
        words = text.split()
        if not words:
            raise DevError("a command needs a name, e.g. !hello")
        context = {
            "query_id": self._next_query(),
            "session": self._session_info(),
            "command_text": text,
            "full_command_text": f"!{text}",
            "command": words[0],
            "crt_command": words[0],
            "params": words,
            "crt_params": words[1:],
            "privilege": 2,
        }
        replies: list[str] = []
        for item in await self.client.execute_command(context):
            shown = str(item.get("text") or "")
            if not shown and item.get("image_url"):
                shown = f"[image {item['image_url']}]"
            replies.append(shown)
            await self.events.emit("command.reply", {"command": words[0], "text": shown})
        return replies

    async def call_tool(self, name: str, parameters: dict[str, Any]) -> Any:
        """Call the plugin's tool ``name`` as LangBot's tool loader does."""
        await self.wait_ready()
        result = await self.client.call_tool(
            name, parameters, session=self._session_info(), query_id=self._next_query()
        )
        await self.events.emit("tool.reply", {"name": name, "result": result})
        return result

    async def emit_event(self, name: str, data: dict[str, Any]) -> dict[str, Any]:
        """Emit event ``name`` to the plugin's listeners; ``data`` are its fields, the
        chat's own filled in (:func:`~langbot_plugin.dev.event_fields.event_fields`)."""
        fields = event_fields(name, data)
        await self.wait_ready()
        context = {
            "query_id": self._next_query(),
            "event_name": name,
            "event": {**fields, "event_name": name},
        }
        result = await self.client.emit_event(context)
        answer = result.event_context
        await self.events.emit("event.reply", {"name": name, "result": answer})
        return answer

    async def reset(self) -> str:
        """Start a new conversation (history and conversation state start empty)."""
        self.conversation_id = f"dev-{secrets.token_hex(4)}"
        self._save_conversation()
        await self.events.emit("conversation.reset", {"conversation_id": self.conversation_id})
        return self.conversation_id


class _EventLogHandler(logging.Handler):
    """Hands log records to the session's event loop (from any thread); when the
    buffer is full a record is counted and dropped rather than blocking the logger."""

    def __init__(self, send: MemoryObjectSendStream[dict[str, Any]]) -> None:
        super().__init__(logging.WARNING)
        self.send = send
        self.token = anyio.lowlevel.current_token()
        self.thread = threading.get_ident()
        self.dropped = 0

    def emit(self, record: logging.LogRecord) -> None:
        entry = {"level": record.levelname, "logger": record.name, "text": record.getMessage()}
        try:
            if threading.get_ident() == self.thread:
                self.send.send_nowait(entry)
            else:
                anyio.from_thread.run_sync(self.send.send_nowait, entry, token=self.token)
        except (anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self.dropped += 1
        except RuntimeError:  # the loop is gone (the session is closing)
            self.dropped += 1


class _Announcing:
    """The local host as the runtime sees it, with a ``host.call`` event per call."""

    def __init__(self, local: LocalHost, session: DevSession) -> None:
        self.local = local
        self.session = session

    def resolve(self, action: str) -> Route | None:
        route = self.local.resolve(action)
        if route is None or action in QUIET_ACTIONS:
            return route
        return preceded_by(route, self._note)

    async def _note(self, ctx: RequestContext) -> None:
        data = ctx.data
        run_id = data.get("run_id") if isinstance(data.get("run_id"), str) else None
        shown: dict[str, Any] = {"action": ctx.request.action}
        if "llm_model_uuid" in data:
            shown["model"] = data["llm_model_uuid"]
            shown["messages"] = len(data.get("messages") or [])
        await self.session.events.emit("host.call", shown, run_id)
