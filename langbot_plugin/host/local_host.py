"""A small in-memory host: what a plugin runtime asks of LangBot, served locally.

It keeps plugin settings, binary storage, the replies of event handlers and commands
(:class:`QueryHost`) and a log of every call, answers models from a
:class:`ScriptedModel` and tools from :class:`HostTool` entries, and serves agent runs
through :class:`~langbot_plugin.host.run_host.RunHost` (:meth:`LocalHost.run`). Tests,
the demo and local development use it instead of a full LangBot. A ``run_id`` this host
never registered passes unchecked unless ``strict_runs=True``. The caller is the
installation bound in the envelope context, else the payload's
``caller_plugin_identity``; the two disagreeing is refused ``run_not_owned``.
"""

from __future__ import annotations

import base64
import functools
import os
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from langbot_plugin.api.proxies.agent_run.replies import EVENT_REPLY_TOOL
from langbot_plugin.host.box_files import BoxFileAccess
from langbot_plugin.host.box_service import RunBoxService, SandboxClient, ScopeId
from langbot_plugin.host.errors import RunNotOwnedError
from langbot_plugin.host.query_api import QueryHost
from langbot_plugin.host.run_host import OnResult, RunHost, RunOutcome, StartedRun
from langbot_plugin.host.sandbox_tools import SANDBOX_TOOLS
from langbot_plugin.host.scripted import HostModel, HostTool, ScriptedModel
from langbot_plugin.protocol.containers import PluginSettings
from langbot_plugin.protocol.host_api import messaging, models, storage
from langbot_plugin.protocol.host_link import (
    GET_PLUGIN_SETTINGS,
    INITIALIZE_PLUGIN_SETTINGS,
    PluginSettingsParams,
)
from langbot_plugin.protocol.scope import ActionScope, bridge_binding
from langbot_plugin.protocol.spec import ActionTable, Empty, Params, Result
from langbot_plugin.rpc import NotFoundError, RequestContext, Route
from langbot_plugin.rpc.errors import InvalidParamsError, NotSupportedError
from langbot_plugin.rpc.routes import before
from langbot_plugin.rpc.tracing import trace_table

if TYPE_CHECKING:
    from langbot_plugin.host.runtime_client import PluginRuntimeClient

__all__ = ["HostCall", "HostModel", "HostTool", "LocalHost", "ScriptedModel"]


@dataclass(frozen=True, slots=True)
class HostCall:
    action: str
    data: dict[str, Any]
    context: dict[str, Any] | None


@dataclass
class LocalHost:
    """Serves the runtime -> host actions from memory (a :class:`Dispatcher`)."""

    models: dict[str, HostModel] = field(
        default_factory=lambda: dict[str, HostModel]({"scripted-model": ScriptedModel()})
    )
    version: str = "v4.11.2"
    settings: dict[str, PluginSettings] = field(default_factory=dict[str, PluginSettings])
    storage: dict[tuple[str, str, str], bytes] = field(
        default_factory=dict[tuple[str, str, str], bytes]
    )
    calls: list[HostCall] = field(default_factory=list[HostCall])
    tools: dict[str, HostTool] = field(default_factory=dict[str, HostTool])
    runs: RunHost = field(default_factory=RunHost)
    strict_runs: bool = False
    #: Serves the runs' Box calls and sandbox tools when given (see ``with_box``).
    box: RunBoxService | None = None
    #: Replies runs sent on their own event (``reply_message``, ``reply_files``,
    #: finished ``reply_stream`` s): ``{"run_id", "message", ...}`` each, in order.
    replies: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    #: Replies, sent messages and query variables of event handlers and commands.
    queries: QueryHost = field(default_factory=QueryHost)

    def __post_init__(self) -> None:
        own = ActionTable()
        own.add(INITIALIZE_PLUGIN_SETTINGS, self._initialize_settings)
        own.add(GET_PLUGIN_SETTINGS, self._get_settings)
        own.add(messaging.GET_LANGBOT_VERSION, self._version)
        own.add(models.GET_LLM_MODELS, self._llm_models)
        own.add(models.INVOKE_LLM, self._invoke_llm)
        own.add(models.INVOKE_LLM_STREAM, self._invoke_llm_stream)
        own.add(models.COUNT_TOKENS, self._count_tokens)
        own.add(models.CALL_TOOL, self._call_tool)
        own.add(models.GET_TOOL_DETAIL, self._tool_detail)
        own.add(storage.SET_BINARY_STORAGE, self._set_storage)
        own.add(storage.GET_BINARY_STORAGE, self._get_storage)
        own.add(storage.GET_BINARY_STORAGE_KEYS, self._storage_keys)
        own.add(storage.DELETE_BINARY_STORAGE, self._delete_storage)
        own.add(messaging.CALL_PLATFORM_API, self._call_platform_api)
        own.add(messaging.REPLY_STREAM, self._reply_stream)
        self._streams: dict[tuple[str, str], str] = {}
        self.queries.add_to(own)
        self.runs.services.identify = self._identify
        self._own = own
        self._dispatcher = self.runs.dispatcher(own, strict=self.strict_runs)
        self._dispatcher.use(before(self._record))  # outermost: every call is written down
        trace_table(self._dispatcher, "runtime")

    def resolve(self, action: str) -> Route | None:
        return self._dispatcher.resolve(action)

    def calls_of(self, action: str) -> list[HostCall]:
        return [c for c in self.calls if c.action == action]

    def with_box(
        self,
        client: SandboxClient,
        *,
        scope_id: ScopeId,
        image: str | None = None,
        artifact_root: str | os.PathLike[str] | None = None,
    ) -> RunBoxService:
        """Serve Box calls and the ``exec`` tool of runs through ``client`` (a
        ``box_runtime.client.BoxClient``); ``scope_id`` names a scope's session
        (``box_runtime.scope.scoped_session_id``); ``artifact_root`` (a directory the Box
        allows as a mount source) lets runs mount their artifacts. Call before connecting."""
        self.box = RunBoxService(
            client, self.runs.services, scope_id=scope_id, image=image, artifact_root=artifact_root
        )
        files = self.runs.services.files
        if files.box is None:  # the same Box serves the runs' file exports (BoxClient does)
            files.box = cast(BoxFileAccess, client)
        self.box.register(self._own)
        self.runs.releases.append(self.box.release)
        return self.box

    def add_tool(self, tool: HostTool) -> HostTool:
        self.tools[tool.name] = tool
        return tool

    # ----------------------------------------------------------------- plumbing

    def _record(self, ctx: RequestContext) -> None:
        self.calls.append(HostCall(ctx.request.action, dict(ctx.data), ctx.context))

    def _identify(self, ctx: RequestContext) -> str | None:
        claimed = ctx.data.get("caller_plugin_identity")
        claimed = claimed if isinstance(claimed, str) and claimed else None
        try:
            installation = ActionScope.from_context(ctx.context).installation_uuid
        except InvalidParamsError:  # a malformed context names no installation
            installation = None
        owners = [i for i, row in self.settings.items() if row.installation_uuid == installation]
        bound = owners[0] if installation is not None and owners else None
        if bound is not None and claimed is not None and bound != claimed:
            raise RunNotOwnedError(
                "Caller plugin identity does not match the installation binding",
                details={"caller": claimed, "binding": bound},
            )
        return bound or claimed

    # ----------------------------------------------------------------- runs

    async def start_run(
        self, plugin_identity: str, runner_name: str, text: str | None = "hello", **options: Any
    ) -> StartedRun:
        """Register a run of ``author/name``'s runner (see :meth:`RunHost.start_run`);
        the context grants every scripted model and tool unless ``resources`` is given."""
        if "resources" not in options:
            from langbot_plugin.host.run_context import make_resources

            tools = [*self.tools, *(SANDBOX_TOOLS if self.box is not None else ())]
            options["resources"] = make_resources(models=list(self.models), tools=tools)
        return await self.runs.start_run(plugin_identity, runner_name, text, **options)

    async def run(
        self,
        client: PluginRuntimeClient,
        author: str,
        plugin: str,
        runner: str,
        text: str | None = "hello",
        *,
        on_result: OnResult | None = None,
        scope: ActionScope | None = None,
        **options: Any,
    ) -> RunOutcome:
        """Start a run, send ``run_runner`` through ``client`` and drive it to its end;
        the refusals the runtime and the SDK made for it join its audit."""
        started = await self.start_run(f"{author}/{plugin}", runner, text, **options)
        deadline = started.session.deadline_at
        idle = 300.0 if deadline is None else max(deadline - self.runs.clock(), 0.0) + 1.0
        items = client.run_runner(
            author, plugin, runner, started.context, scope=scope, timeout=idle
        )
        audit = functools.partial(client.get_run_audit, scope=scope)
        return await self.runs.drive(started, items, on_result=on_result, runtime_audit=audit)

    # ----------------------------------------------------------------- settings

    async def _initialize_settings(self, p: PluginSettingsParams, ctx: RequestContext) -> Empty:
        identity = f"{p.plugin_author}/{p.plugin_name}"
        current = self.settings.get(identity)
        if current is None:
            current = PluginSettings(
                installation_uuid=str(uuid.uuid4()), runtime_revision=1, artifact_digest="0" * 64
            )
        current.install_source = p.install_source or current.install_source
        current.install_info = dict(p.install_info or {})
        self.settings[identity] = current
        return Empty()

    async def _get_settings(self, p: PluginSettingsParams, ctx: RequestContext) -> PluginSettings:
        """The plugin's row; asked under an installation binding of its own (an installed
        copy beside a debug one), that installation's row, as the host keeps one row per
        installation (the reference runtime checks that the two agree)."""
        row = self.settings.get(f"{p.plugin_author}/{p.plugin_name}", PluginSettings())
        try:
            scope = ActionScope.from_context(ctx.context)
        except InvalidParamsError:
            return row
        bridge, asked = bridge_binding(scope), scope.installation_uuid
        if (
            asked is None
            or bridge is None
            or asked in (row.installation_uuid, bridge.installation_uuid)
        ):
            return row
        return row.model_copy(update={"installation_uuid": asked})

    async def _version(self, p: Params, ctx: RequestContext) -> messaging.LangBotVersion:
        return messaging.LangBotVersion(version=self.version, api_features=[])

    # ----------------------------------------------------------------- models

    async def _llm_models(self, p: Params, ctx: RequestContext) -> models.LLMModels:
        return models.LLMModels(llm_models=list(self.models))

    def _model(self, p: models.InvokeLLMParams) -> tuple[HostModel, list[dict[str, Any]]]:
        model = self.models.get(p.llm_model_uuid)
        if model is None:
            raise NotFoundError(f"no model {p.llm_model_uuid!r}")
        return model, [m.model_dump(mode="json", exclude_unset=True) for m in p.messages]

    @staticmethod
    def _funcs(p: models.InvokeLLMParams) -> list[dict[str, Any]]:
        return [f.model_dump(mode="json") for f in p.funcs]

    async def _invoke_llm(self, p: models.InvokeLLMParams, ctx: RequestContext) -> models.LLMAnswer:
        model, messages = self._model(p)
        message, usage = await model.invoke(messages, self._funcs(p))
        return models.LLMAnswer.model_validate({"message": message, "usage": usage})

    async def _invoke_llm_stream(
        self, p: models.InvokeLLMParams, ctx: RequestContext
    ) -> AsyncIterator[models.LLMStreamItem]:
        model, messages = self._model(p)
        async for item in model.stream(messages, self._funcs(p)):
            yield models.LLMStreamItem.model_validate(item)

    async def _count_tokens(
        self, p: models.InvokeLLMParams, ctx: RequestContext
    ) -> models.TokenCount:
        _, messages = self._model(p)
        return models.TokenCount(tokens=ScriptedModel.count_tokens(messages))

    # ----------------------------------------------------------------- tools

    def _tool(self, p: models.ToolRef) -> HostTool:
        tool = self.tools.get(p.tool_name)
        if tool is None:
            raise NotFoundError(f"Tool {p.tool_name} not found")
        return tool

    async def _call_tool(
        self, p: models.CallToolParams, ctx: RequestContext
    ) -> models.ToolCallAnswer:
        own = self.tools.get(p.tool_name)
        in_run = own is not None and own.run_function is not None
        if p.run_id and self.box is not None and p.tool_name in SANDBOX_TOOLS and not in_run:
            answer = await self.box.call_tool(p.run_id, p.tool_name, dict(p.parameters or {}))
            return models.ToolCallAnswer(result=answer)
        tool = self._tool(p)
        if p.run_id:  # the run API's form (parameters checked by the gate)
            result = await tool.call(dict(p.parameters or {}), p.run_id)
            return models.ToolCallAnswer(result=result)
        return models.ToolCallAnswer(tool_response=await tool.call(dict(p.tool_parameters or {})))

    async def _tool_detail(self, p: models.ToolRef, ctx: RequestContext) -> models.ToolDetailAnswer:
        detail = self._tool(p).detail()
        return models.ToolDetailAnswer(tool=models.ToolDetail(**detail))

    # ----------------------------------------------------------------- replies

    async def _call_platform_api(
        self, p: messaging.PlatformApiParams, ctx: RequestContext
    ) -> messaging.PlatformApiResult:
        if not (p.run_id and p.context_tool == EVENT_REPLY_TOOL):
            raise NotSupportedError("this host has no platform bots: only a run's own replies")
        self.runs.services.session(p.run_id, ctx)
        message = p.params.get("message")
        self.replies.append(
            {"run_id": p.run_id, "message": message, "file_ids": p.file_ids, "stream": False}
        )
        return messaging.PlatformApiResult(result={"message_id": len(self.replies)})

    async def _reply_stream(
        self, p: messaging.ReplyStreamParams, ctx: RequestContext
    ) -> messaging.ReplyStreamResult:
        run_id = p.run_id or ""
        self.runs.services.session(run_id, ctx, messaging.REPLY_STREAM)
        key = (run_id, p.stream_id)
        if p.operation == "update":
            self._streams[key] = p.text
        elif p.operation == "finish":
            text = self._streams.pop(key, p.text)
            message = [{"type": "Plain", "text": text}]
            self.replies.append({"run_id": run_id, "message": message, "stream": True})
        else:
            self._streams.pop(key, None)
        return messaging.ReplyStreamResult(result={"operation": p.operation})

    # ----------------------------------------------------------------- storage

    @staticmethod
    def _key(p: storage.BinaryStorageKey) -> tuple[str, str, str]:
        return (p.owner_type, p.owner, p.key)

    async def _set_storage(self, p: storage.BinaryStorageSet, ctx: RequestContext) -> Result:
        self.storage[self._key(p)] = base64.b64decode(p.value_base64)
        return Result()

    async def _get_storage(
        self, p: storage.BinaryStorageKey, ctx: RequestContext
    ) -> storage.StorageValue:
        key = self._key(p)
        if key not in self.storage:
            raise NotFoundError(f"Storage with key {key[2]} not found")
        return storage.StorageValue(value_base64=base64.b64encode(self.storage[key]).decode())

    async def _storage_keys(
        self, p: storage.BinaryStorageKey, ctx: RequestContext
    ) -> storage.StorageKeys:
        owner = (p.owner_type, p.owner)
        return storage.StorageKeys(keys=[k for (t, o, k) in self.storage if (t, o) == owner])

    async def _delete_storage(self, p: storage.BinaryStorageKey, ctx: RequestContext) -> Result:
        self.storage.pop(self._key(p), None)
        return Result()
