""":class:`PluginHarness`: drive a plugin folder as LangBot would, from a test.

::

    async with PluginHarness("path/to/plugin", llm=ScriptedLLM(["hi there"])) as h:
        reply = await h.run_agent("hello")
        assert reply.text == "hi there"
        (answer,) = await h.command("time")
        assert await h.call_tool("add", {"a": 1, "b": 2}) == {"sum": 3.0}

The host side is :class:`~langbot_plugin.host.LocalHost` (models, tools, storage,
run state, replies); the plugin side is the real runtime and worker code, in this
process by default or in a real ``lbp rt`` child with ``process=True``
(:mod:`langbot_plugin.testing.links`).
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import AsyncGenerator, Iterable, Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langbot_plugin.api.definition.components.base import BaseComponent
from langbot_plugin.api.definition.discovery import ManifestError, PluginPackage, load_plugin
from langbot_plugin.api.definition.plugin import BasePlugin
from langbot_plugin.api.entities.context import EventContext
from langbot_plugin.api.entities.events import BaseEventModel
from langbot_plugin.host import HostCall, HostTool, LocalHost, PluginRuntimeClient
from langbot_plugin.host.grants import RunScope
from langbot_plugin.host.query_api import SentMessage
from langbot_plugin.host.run_context import DEFAULT_APIS, build_run_context, make_resources
from langbot_plugin.host.run_host import OnResult
from langbot_plugin.host.scripted import ScriptedModel
from langbot_plugin.protocol.containers import PluginSettings
from langbot_plugin.protocol.control_link import CommandReturnItem
from langbot_plugin.protocol.runners import RUNNER_KINDS
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.stack import StackError
from langbot_plugin.testing import contexts
from langbot_plugin.testing.components import ComponentCalls
from langbot_plugin.testing.errors import HarnessError, listener_error, plugin_frames
from langbot_plugin.testing.links import Connection, child_process, in_memory
from langbot_plugin.testing.replies import AgentReply, EmittedEvent
from langbot_plugin.testing.scripted import ScriptedLLM

if TYPE_CHECKING:  # the Box client is imported only by tests that start a Box
    from langbot_plugin.dev.recording import ReplayReport
    from langbot_plugin.testing.box import BoxSandbox

__all__ = ["PluginHarness"]


def _defaults(spec: Any) -> dict[str, Any]:
    """The ``default`` of each item of a ``spec.config`` form."""
    items = spec.get("config") if isinstance(spec, dict) else None
    defaults: dict[str, Any] = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and "name" in item and "default" in item:
            defaults[str(item["name"])] = item["default"]
    return defaults


def _single_failure(exc: BaseException) -> HarnessError | None:
    """The one :class:`HarnessError` (or piece of the stack that did not start) a task
    group wrapped, so a test sees one line."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if isinstance(exc, StackError):
        return HarnessError(str(exc))
    return exc if isinstance(exc, HarnessError) else None


class PluginHarness(ComponentCalls):
    """One plugin, a local host around it, and the calls LangBot makes to it.

    ``llm`` (or ``models``, several by id) answers the plugin's model calls; ``tools``
    are the host's own tools (what LangBot's built-in and MCP tools are to a runner);
    ``config`` is the plugin's settings (over the defaults of ``spec.config``).
    ``process=True`` runs the plugin the way LangBot does in production: a real
    ``lbp rt`` child with the folder installed as a package. ``box`` (a
    :class:`~langbot_plugin.testing.box.BoxSandbox`) adds its ``exec`` tool and binds
    every run to its session, so runners may ``export_box_files`` what they wrote there
    and deliver it (``reply.deliveries``), and mount their artifacts
    (``api.artifacts.mount``) for their ``exec`` commands.
    """

    def __init__(
        self,
        plugin_dir: str | os.PathLike[str],
        *,
        llm: ScriptedModel | None = None,
        models: Iterable[ScriptedModel] = (),
        tools: Iterable[HostTool] = (),
        box: BoxSandbox | None = None,
        config: Mapping[str, Any] | None = None,
        process: bool = False,
        workdir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.root = Path(plugin_dir).resolve()
        try:
            self.package: PluginPackage = load_plugin(self.root)
        except ManifestError as exc:
            raise HarnessError(f"{self.root} is not a plugin folder: {exc}") from None
        chosen = [llm] if llm is not None else []
        chosen.extend(models)
        if not chosen:
            chosen = [ScriptedLLM()]
        self.llm: ScriptedModel = chosen[0]
        self.host = LocalHost(models={m.model_uuid: m for m in chosen}, strict_runs=True)
        self.box = box
        for tool in tools:
            self.host.add_tool(tool)
        # The runs' Box calls, exec, exports and artifact mounts go through the host
        # library's Box service (each run is bound to the sandbox's session).
        self.box_service = box.serve(self.host) if box is not None else None
        plugin_config = {**_defaults(self.package.manifest.manifest.get("spec")), **(config or {})}
        self.host.settings[self.package.identity] = PluginSettings(
            installation_uuid=str(uuid.uuid4()), plugin_config=plugin_config
        )
        self.process = process
        self._workdir = Path(workdir) if workdir is not None else None
        self._stack = AsyncExitStack()
        self._connection: Connection | None = None
        self.conversation_id = "person_local-user"
        self._last_runner: str | None = None  # what state() reads when not told

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> PluginHarness:
        try:
            if self._workdir is None:
                scratch = self._stack.enter_context(tempfile.TemporaryDirectory(prefix="lbp-h-"))
                self._workdir = Path(scratch)
            self._workdir.mkdir(parents=True, exist_ok=True)
            opened = (
                child_process(self.root, self.host, self._workdir)
                if self.process
                else in_memory(self.root, self.host, self._workdir / "rt-data")
            )
            self._connection = await self._stack.enter_async_context(opened)
        except BaseException as exc:
            await self._stack.aclose()
            single = _single_failure(exc)
            if single is not None:
                raise single from None
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._connection = None
        await self._stack.aclose()
        self.host.runs.close()

    @property
    def connection(self) -> Connection:
        if self._connection is None:
            raise HarnessError("use the harness inside `async with PluginHarness(...) as h:`")
        return self._connection

    def _target(self) -> tuple[PluginRuntimeClient, ActionScope | None, str, str]:
        return self.client, self.connection.scope, self.author, self.name

    @property
    def client(self) -> PluginRuntimeClient:
        """The host's client of the runtime (for calls the harness has no method for)."""
        return self.connection.client

    # ------------------------------------------------------------------ what happened

    @property
    def author(self) -> str:
        return self.package.author

    @property
    def name(self) -> str:
        return self.package.name

    @property
    def host_calls(self) -> list[HostCall]:
        """Every call the plugin made to the host, in order."""
        return list(self.host.calls)

    def calls_of(self, action: str) -> list[HostCall]:
        """The plugin's calls of one host action (``invoke_llm``, ``call_tool``...)."""
        return self.host.calls_of(action)

    @property
    def sent(self) -> list[SentMessage]:
        """Every message the plugin replied or sent (event handlers, commands)."""
        return list(self.host.queries.sent)

    @property
    def storage(self) -> dict[str, bytes]:
        """The plugin's own binary storage (``set_plugin_storage``...), by key."""
        return {
            key: value
            for (kind, owner, key), value in self.host.storage.items()
            if kind == "plugin" and owner == self.package.identity
        }

    @property
    def plugin(self) -> BasePlugin:
        """The live plugin instance (in-memory harness only)."""
        loaded = self._loaded()
        assert loaded.plugin is not None
        return loaded.plugin

    def component(self, kind: str, name: str) -> BaseComponent:
        """The live instance of one component (in-memory harness only)."""
        found = self._loaded().find((kind,), name)
        if found is None or found.instance is None:
            raise HarnessError(f"{self.package.identity} has no {kind} {name!r}")
        return found.instance

    def _loaded(self) -> Any:
        loaded = self.connection.loaded
        if loaded is None:
            raise HarnessError("the plugin runs in another process (process=True)")
        return loaded

    async def logs(self, limit: int = 200) -> list[dict[str, Any]]:
        """The plugin's log lines as the runtime captured them (``process=True``)."""
        return await self.client.get_plugin_logs(
            self.author, self.name, scope=self.connection.scope, limit=limit
        )

    # ------------------------------------------------------------------ agent runs

    def runner_names(self) -> list[str]:
        return [c.name for c in self.package.of_kind(*RUNNER_KINDS)]

    def _runner(self, name: str | None) -> Any:
        runners = self.package.of_kind(*RUNNER_KINDS)
        if name is None and len(runners) == 1:
            return runners[0]
        found = next((r for r in runners if r.name == name), None)
        if found is None:
            names = ", ".join(r.name for r in runners) or "none"
            wanted = f"no runner {name!r}" if name else "several runners: pass runner=NAME"
            raise HarnessError(f"{self.package.identity}: {wanted} (runners: {names})")
        return found

    def _resources(self, permissions: Any) -> dict[str, Any]:
        """What LangBot grants a run: each host model and tool, with the operations the
        runner asks for in ``spec.permissions`` (all when it declares none)."""
        asked = permissions if isinstance(permissions, dict) else None

        def grant(kind: str, ids: list[str]) -> dict[str, list[str]] | list[str]:
            if asked is None or kind not in asked:
                return ids
            ops = [str(op) for op in asked[kind] or []]
            return dict.fromkeys(ids, ops) if ops else {}

        return make_resources(
            models=grant("models", list(self.host.models)),
            tools=grant("tools", list(self.host.tools)),
            plugin_storage=True,
            workspace_storage=True,
        )

    def new_conversation(self) -> str:
        """Start a new conversation (what ``/reset`` does in a chat); returns its id."""
        self.conversation_id = f"person_local-user-{uuid.uuid4().hex[:8]}"
        return self.conversation_id

    async def run_agent(
        self,
        text: str = "hello",
        *,
        runner: str | None = None,
        config: Mapping[str, Any] | None = None,
        resources: Mapping[str, Any] | None = None,
        timeout: float = 60.0,
        on_result: OnResult | None = None,
        **options: Any,
    ) -> AgentReply:
        """Send ``text`` to the runner (the only one, or ``runner``) and drive the run
        to its end; the reply has the final text and every result item.

        ``config`` is the runner's settings over its ``spec.config`` defaults;
        ``resources`` replaces the default grants; ``on_result`` sees each result as it
        arrives (to test streaming as it happens); other ``options`` go to
        :func:`~langbot_plugin.host.run_context.build_run_context` (``attachments``,
        ``available_apis``, ``launcher_id``...). With a ``box``, the run is bound to its
        session and ``available_apis.box`` is on. A failed run is returned, not raised
        (``reply.ok`` is false, ``reply.error`` says why).
        """
        component = self._runner(runner)
        self._last_runner = component.name
        spec = component.manifest.get("spec")
        settings = {**_defaults(spec), **(config or {})}
        permissions = spec.get("permissions") if isinstance(spec, dict) else None
        if self.box is not None:
            options.setdefault("available_apis", [*DEFAULT_APIS, "box"])
        if "declaration" not in options:
            options["declaration"] = await self.client.runner_declaration(
                self.author, self.name, component.name, self.connection.scope
            )
        started = await self.host.start_run(
            self.package.identity,
            component.name,
            text,
            resources=dict(resources) if resources is not None else self._resources(permissions),
            config=settings,
            conversation_id=options.pop("conversation_id", self.conversation_id),
            timeout=timeout,
            **options,
        )
        if self.box is not None and self.box_service is not None:
            self.box_service.bind_run(started.run_id, self.box.session_id)
        items = self.client.run_runner(
            self.author,
            self.name,
            component.name,
            started.context,
            scope=self.connection.scope,
            timeout=timeout + 5.0,
        )
        received: list[dict[str, Any]] = []

        async def recorded() -> AsyncGenerator[dict[str, Any]]:
            try:
                async for item in items:
                    received.append(item)
                    yield item
            finally:
                await items.aclose()

        outcome = await self.host.runs.drive(started, recorded(), on_result=on_result)
        return AgentReply(outcome, received)

    async def state(
        self, scope: str = "conversation", *, runner: str | None = None
    ) -> dict[str, Any]:
        """The runner's persistent state in ``scope`` (``conversation``, ``actor``,
        ``runner``) for the current conversation: the state of ``runner``, else of the
        plugin's only runner, else of the runner the last ``run_agent`` drove."""
        component = self._runner(runner or self._last_runner)
        context = build_run_context(None, conversation_id=self.conversation_id)
        runner_id = f"plugin:{self.package.identity}/{component.name}"
        key = RunScope.from_context(context).state_key(scope, runner_id)
        if key is None:
            raise HarnessError(f"state scope {scope!r} needs an identity this chat has not")
        return await self.host.runs.state.snapshot(key)

    # ------------------------------------------------------------------ recordings

    @staticmethod
    async def replay(
        plugin_dir: str | os.PathLike[str],
        recording: str | os.PathLike[str],
        *,
        runner: str | None = None,
    ) -> ReplayReport:
        """Run the plugin in ``plugin_dir`` against a recording of ``lbp dev --record``:
        the recorded inputs again, each call to the host answered from the recording.
        The inputs go to the runner they went to when recorded (or to ``runner``).
        ``report.ok`` when every call and reply is as recorded; else
        ``report.describe()`` names the first call (or reply) that differs::

            report = await PluginHarness.replay(".", "tests/recordings/add.jsonl")
            assert report.ok, report.describe()
        """
        import anyio

        from langbot_plugin.dev.recording import replay
        from langbot_plugin.host.exchange import Recording, RecordingError

        try:
            loaded = await anyio.to_thread.run_sync(Recording.load, Path(recording))
        except RecordingError as exc:
            raise HarnessError(str(exc)) from None
        # the session resolves the folder
        return await replay(Path(plugin_dir), loaded, runner=runner)

    # ------------------------------------------------------------------ commands, tools, events

    async def command(
        self, text: str, *, chat: Mapping[str, Any] | None = None, privilege: int = 1
    ) -> list[CommandReturnItem]:
        """What a user typing ``!<text>`` gets back from the plugin's command."""
        context = contexts.command_context(text, chat=chat, privilege=privilege)
        with plugin_frames():
            replies = await self.client.execute_command(context, scope=self.connection.scope)
        return [CommandReturnItem.model_validate(r) for r in replies]

    async def call_tool(
        self,
        name: str,
        parameters: Mapping[str, Any] | None = None,
        *,
        chat: Mapping[str, Any] | None = None,
        query_id: int = 1,
    ) -> Any:
        """Call the plugin's tool ``name`` as LangBot does for a model's tool call."""
        with plugin_frames():
            return await self.client.call_tool(
                name,
                dict(parameters or {}),
                scope=self.connection.scope,
                session=dict(chat or contexts.session()),
                query_id=query_id,
            )

    async def emit_event(
        self, event: BaseEventModel | EventContext | Mapping[str, Any]
    ) -> EmittedEvent:
        """Emit an event to the plugin's listeners; returns whether one handled it, the
        context as the listeners left it, and what they replied meanwhile. A listener
        that raises fails the call with its error (and where it raised)."""
        before = len(self.host.queries.sent)
        result = await self.client.emit_event(
            contexts.event_context(event), scope=self.connection.scope
        )
        for failure in result.failures:
            with plugin_frames():
                raise listener_error(failure)
        return EmittedEvent(
            emitted=bool(result.emitted_plugins),
            context=EventContext.model_validate(result.event_context),
            replies=self.host.queries.sent[before:],
        )
