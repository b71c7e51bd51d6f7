"""The ``lbp dev`` session driver: host machinery + runtime + the plugin, and its runs as events.

:class:`DevSession` is the one object every front end uses (the terminal chat,
``--message``/``--json``, the web page, and tests)::

    async with DevSession(Path("my_plugin"), model=echo_model()) as dev:
        dev.events.subscribe(print)            # every DevEvent, as it happens
        outcome = await dev.send("hi")         # one agent run -> RunOutcome
        replies = await dev.command("hello bob")
        result = await dev.call_tool("add", {"a": 1, "b": 2})
        await dev.emit_event("PersonNormalMessageReceived", {"text": "ping"})
        await dev.reset()                      # a new conversation

What it starts, all on 127.0.0.1 and stopped in reverse order:

1. a :class:`~langbot_plugin.host.LocalHost` (the host side: the model, the plugin's
   own tools offered to its runner, storage, runner state and transcript on SQLite
   under the state folder), connected to
2. the plugin runtime (``lbp rt``'s :class:`~langbot_plugin.runtime.app.PluginRuntime`,
   in this process, over an in-memory control link; its debug port on a free port:
   :mod:`langbot_plugin.stack`),
   which hands out a debug key, used by
3. ``lbp run`` for the plugin folder, a child process: the plugin runs in its own
   process as under LangBot, with ``lbp run``'s hot reload (a save that does not load
   is reported as ``plugin.broken`` and the last good version keeps serving).

The state folder (default ``<plugin>/.lbp-dev``; docs/plugin-authoring.md, "State")
persists between sessions; ``fresh=True`` clears it first.
"""

from __future__ import annotations

import json
import secrets
import shutil
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import anyio

from langbot_plugin.dev.calls import SessionCalls
from langbot_plugin.dev.errors import DevError
from langbot_plugin.dev.events import EventHub
from langbot_plugin.dev.host_side import (
    Announcing,
    component_name,
    runner_config,
    runner_resources,
    runtime_logs,
    watched,
)
from langbot_plugin.dev.models import echo_model
from langbot_plugin.dev.plugin_process import PluginProcess
from langbot_plugin.dev.storage import PersistentStorage
from langbot_plugin.host import LocalHost, PluginRuntimeClient, RunHost, RunOutcome
from langbot_plugin.host.box_service import RunBoxService
from langbot_plugin.host.results import NormalizedResult
from langbot_plugin.host.run_context import DEFAULT_APIS
from langbot_plugin.host.scripted import HostModel, HostTool
from langbot_plugin.protocol.runner_declaration import DECLARATION_KEY
from langbot_plugin.rpc import Dispatcher
from langbot_plugin.rpc.processes import free_port
from langbot_plugin.runtime.app import PluginRuntime
from langbot_plugin.runtime.data_lock import LOCK_FILE, DataDirBusyError, hold_data_dir
from langbot_plugin.runtime.plugins import PluginHandle, PluginRegistry
from langbot_plugin.runtime.state import RuntimeOptions
from langbot_plugin.stack import LBP_COMMAND, host_here, runtime_here

if TYPE_CHECKING:  # the Box client is imported only when lbp dev starts a Box
    from langbot_plugin.dev.box import LocalBox

__all__ = ["DEFAULT_STATE_DIR", "DevError", "DevSession"]

DEFAULT_STATE_DIR = ".lbp-dev"
READY_SECONDS = 60.0


class DevSession(SessionCalls):
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
        box: LocalBox | None = None,
        lbp_command: Sequence[str] | None = None,
        ready_seconds: float = READY_SECONDS,
        exchange: Callable[[Dispatcher], Dispatcher] | None = None,
    ) -> None:
        self.root = root.resolve()
        self.model: HostModel = model or echo_model()
        self.requested_runner = runner
        self.config_overrides = dict(config or {})
        self.state_dir = (state_dir or self.root / DEFAULT_STATE_DIR).resolve()
        self.fresh = fresh
        self.hot_reload = hot_reload
        self.extra_tools = list(host_tools)
        #: A running ``lbp dev --box`` Box: its tools are offered, and each run is bound
        #: to it through the host library's Box service (artifact mounts included).
        self.box = box
        self.box_service: RunBoxService | None = None
        self._box_tools: list[HostTool] = []
        self.lbp_command = list(lbp_command or LBP_COMMAND)
        self.ready_seconds = ready_seconds
        #: Wraps the host the runtime talks to (a recorder, a replayer: host.exchange).
        self.exchange = exchange
        self.events = EventHub()
        self.author = ""
        self.name = ""
        self.runners: list[dict[str, Any]] = []
        self.tools: list[dict[str, Any]] = []
        self.commands: list[dict[str, Any]] = []
        self.pages: list[dict[str, Any]] = []
        self.runner: str | None = None
        self.conversation_id = ""
        self._stack = AsyncExitStack()
        self._runtime: PluginRuntime | None = None
        self._client: PluginRuntimeClient | None = None
        self.plugin = PluginProcess(self.root, self.lbp_command, self.events, hot_reload=hot_reload)
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
        if self.box is not None:
            box = self.box
            self.box_service = self.local.with_box(
                box.client, scope_id=box.scope_id, artifact_root=box.artifact_root
            )
            self._box_tools = box.host_tools(self.box_service)
        for tool in [*self.extra_tools, *self._box_tools]:
            self.local.add_tool(watched(tool, self.events))

        tg = await self._stack.enter_async_context(anyio.create_task_group())
        self._stack.callback(tg.cancel_scope.cancel)  # runs after the children stopped
        await self._stack.enter_async_context(runtime_logs(self.events, tg))
        options = RuntimeOptions(
            host="127.0.0.1",
            control_port=free_port(),
            debug_port=free_port(),
            control_token=secrets.token_urlsafe(32),
            data_dir=self.state_dir / "runtime",
            handle_signals=False,  # lbp dev's own: it stops everything it started
        )
        runtime = await self._stack.enter_async_context(runtime_here(options))
        self._runtime = runtime
        host: Dispatcher = Announcing(self.local, self.events)
        if self.exchange is not None:
            host = self.exchange(host)
        self._client = await self._stack.enter_async_context(
            host_here(runtime, host, name="lbp-dev")
        )
        key = await self._client.get_debug_key()
        url = f"ws://127.0.0.1:{runtime.options.debug_port}/plugin/debug/ws"
        await self._stack.enter_async_context(self.plugin.running(tg, url, key))
        await self._until_registered(self.ready_seconds)
        if len(runtime.state.registry) == 0:
            raise self.plugin.start_failure(self.ready_seconds)
        self.plugin.started = True
        await self._refresh("plugin.ready")
        tg.start_soon(self._watch_reloads)

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

    async def _refresh(self, kind: str) -> None:
        """Read what the plugin offers now; choose the runner; offer its tools to runs."""
        client = self.client
        assert self._runtime is not None
        handle = next(iter(self._runtime.state.registry), None)
        if handle is None:
            raise DevError("the plugin is not registered", usage=False)
        self.author, self.name = handle.author, handle.name
        spec = handle.container.manifest.manifest.get("spec")
        pages = spec.get("pages") if isinstance(spec, dict) else None
        self.pages = [p for p in pages or [] if isinstance(p, dict) and p.get("id")]
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
            "pages": [{"id": p["id"], "label": p.get("label") or {}} for p in self.pages],
            "host_tools": [t.name for t in [*self.extra_tools, *self._box_tools]],
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
        if len(registry) > 0 or self.plugin.exited.is_set():
            return
        with anyio.move_on_after(seconds):
            async with anyio.create_task_group() as tg:

                async def registered() -> None:
                    await registry.wait_for(lambda r: len(r) > 0)
                    tg.cancel_scope.cancel()

                async def exited() -> None:
                    await self.plugin.exited.wait()
                    tg.cancel_scope.cancel()

                tg.start_soon(registered)
                tg.start_soon(exited)

    async def wait_ready(self, seconds: float = 30.0) -> None:
        """Wait (bounded) for the plugin to be registered: it is absent for a moment
        while a reload reconnects."""
        assert self._runtime is not None
        registry = self._runtime.state.registry
        await self._until_registered(seconds)
        if self.plugin.exited.is_set():
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
        return watched(hosted, self.events)

    # ------------------------------------------------------------------ the conversation

    def _next_query(self) -> int:
        self._query_id += 1
        return self._query_id

    def _session_info(self) -> dict[str, Any]:
        return {"launcher_type": "person", "launcher_id": "dev-user", "sender_id": "dev-user"}

    async def send(self, text: str) -> RunOutcome:
        """One agent run of the chosen runner on ``text``; its results are emitted as
        they arrive, ``run.ended`` last."""
        await self.wait_ready()
        entry = next((r for r in self.runners if r["manifest"]["name"] == self.runner), None)
        if self.runner is None or entry is None:
            raise DevError("the plugin has no agent runner: add one with 'lbp comp AgentRunner'")
        manifest = dict(entry["manifest"])
        declared = entry.get(DECLARATION_KEY)  # the runner's Protocol v1 declaration
        local = self.host
        started = await local.start_run(
            self.identity,
            self.runner,
            text,
            conversation_id=self.conversation_id,
            launcher_id="dev-user",
            sender_name="Developer",
            resources=runner_resources(manifest, local),
            config=runner_config(manifest, self.model.model_uuid, self.config_overrides),
            declaration=declared if isinstance(declared, dict) else None,  # pyright: ignore[reportUnknownArgumentType]
            **({"available_apis": [*DEFAULT_APIS, "box"]} if self.box is not None else {}),
        )
        run_id = started.run_id
        if self.box_service is not None:
            from langbot_plugin.dev.box import BOX_SESSION

            self.box_service.bind_run(run_id, BOX_SESSION)
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
        outcome = await local.runs.drive(
            started, items, on_result=on_result, runtime_audit=self.client.get_run_audit
        )
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

    async def reset(self) -> str:
        """Start a new conversation (history and conversation state start empty)."""
        self.conversation_id = f"dev-{secrets.token_hex(4)}"
        self._save_conversation()
        await self.events.emit("conversation.reset", {"conversation_id": self.conversation_id})
        return self.conversation_id
