"""A small in-memory host: what a plugin runtime asks of LangBot, served locally.

It keeps plugin settings, binary storage and a log of every call, answers model
calls from a :class:`ScriptedModel` and tool calls from :class:`HostTool` entries,
and serves agent runs through :class:`~langbot_plugin.host.run_host.RunHost`: the
run-scoped actions (``state_*``, ``history_*``, ``event_*``, ``steering_pull``,
``run_*``, ``get_prompt``) and run authorization of model, tool and storage calls
that carry a ``run_id``. Tests use it to check what reached the host; the demo and
local development use it instead of a full LangBot.

Start and drive a run with :meth:`LocalHost.run` (or :meth:`LocalHost.start_run` and
``host.runs.drive``). Runs registered here are always enforced; a ``run_id`` this
host never registered passes unchecked unless ``strict_runs=True`` (then it is
refused ``run_not_live``, as the 4.11.2 host does).

The caller of a call is the installation bound in the envelope context (looked up
in :attr:`LocalHost.settings`), else the ``caller_plugin_identity`` the runtime put
in the payload; the two disagreeing is refused ``run_not_owned``.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from pydantic import ValidationError

from langbot_plugin.host.errors import RunNotOwnedError
from langbot_plugin.host.run_host import OnResult, RunHost, RunOutcome, StartedRun
from langbot_plugin.host.scripted import HostTool, ScriptedModel
from langbot_plugin.protocol.containers import PluginSettings
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.rpc import NotFoundError, RequestContext, Route, RouteTable
from langbot_plugin.rpc.errors import InvalidParamsError
from langbot_plugin.rpc.routes import UnaryHandler, preceded_by

if TYPE_CHECKING:
    from langbot_plugin.host.runtime_client import PluginRuntimeClient

__all__ = ["HostCall", "HostTool", "LocalHost", "ScriptedModel"]

Unary = Callable[[dict[str, Any]], Any]


@dataclass(frozen=True, slots=True)
class HostCall:
    action: str
    data: dict[str, Any]
    context: dict[str, Any] | None


@dataclass
class LocalHost:
    """Serves the runtime -> host actions from memory (a :class:`Dispatcher`)."""

    models: dict[str, ScriptedModel] = field(
        default_factory=lambda: {"scripted-model": ScriptedModel()}
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

    def __post_init__(self) -> None:
        unary: dict[str, Unary] = {
            "initialize_plugin_settings": self._initialize_settings,
            "get_plugin_settings": self._get_settings,
            "get_langbot_version": lambda _: {"version": self.version, "api_features": []},
            "get_llm_models": lambda _: {"llm_models": list(self.models)},
            "invoke_llm": self._invoke_llm,
            "count_tokens": self._count_tokens,
            "call_tool": self._call_tool,
            "get_tool_detail": self._tool_detail,
            "set_binary_storage": self._set_storage,
            "get_binary_storage": self._get_storage,
            "get_binary_storage_keys": self._storage_keys,
            "delete_binary_storage": self._delete_storage,
        }
        own = RouteTable(
            {name: Route(self._unary(fn)) for name, fn in unary.items()},
            invoke_llm_stream=Route(self._invoke_llm_stream, stream=True),
        )
        self.runs.services.identify = self._identify
        self._dispatcher = self.runs.dispatcher(own, strict=self.strict_runs)

    def resolve(self, action: str) -> Route | None:
        route = self._dispatcher.resolve(action)
        return None if route is None else preceded_by(route, self._record)

    def calls_of(self, action: str) -> list[HostCall]:
        return [c for c in self.calls if c.action == action]

    def add_tool(self, tool: HostTool) -> HostTool:
        self.tools[tool.name] = tool
        return tool

    # ----------------------------------------------------------------- plumbing

    def _record(self, ctx: RequestContext) -> None:
        self.calls.append(HostCall(ctx.request.action, dict(ctx.data), ctx.context))

    @staticmethod
    def _unary(fn: Unary) -> UnaryHandler:
        async def handler(ctx: RequestContext) -> dict[str, Any]:
            result = fn(ctx.data)
            if hasattr(result, "__await__"):
                result = await result
            return cast(dict[str, Any], result)

        return handler

    def _identify(self, ctx: RequestContext) -> str | None:
        claimed = ctx.data.get("caller_plugin_identity")
        claimed = claimed if isinstance(claimed, str) and claimed else None
        try:
            installation = ActionScope.from_context(ctx.context).installation_uuid
        except ValidationError:
            installation = None
        bound = next(
            (
                identity
                for identity, row in self.settings.items()
                if installation is not None and row.installation_uuid == installation
            ),
            None,
        )
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

            options["resources"] = make_resources(models=list(self.models), tools=list(self.tools))
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
        """Start a run, send ``run_runner`` through ``client`` and drive it to its end."""
        started = await self.start_run(f"{author}/{plugin}", runner, text, **options)
        deadline = started.session.deadline_at
        idle = 300.0 if deadline is None else max(deadline - self.runs.clock(), 0.0) + 1.0
        items = client.run_runner(
            author, plugin, runner, started.context, scope=scope, timeout=idle
        )
        return await self.runs.drive(started, items, on_result=on_result)

    # ----------------------------------------------------------------- settings

    def _initialize_settings(self, data: dict[str, Any]) -> dict[str, Any]:
        identity = f"{data['plugin_author']}/{data['plugin_name']}"
        current = self.settings.get(identity)
        if current is None:
            current = PluginSettings(
                installation_uuid=str(uuid.uuid4()), runtime_revision=1, artifact_digest="0" * 64
            )
        current.install_source = str(data.get("install_source") or current.install_source)
        current.install_info = dict(data.get("install_info") or {})
        self.settings[identity] = current
        return {}

    def _get_settings(self, data: dict[str, Any]) -> dict[str, Any]:
        identity = f"{data['plugin_author']}/{data['plugin_name']}"
        return self.settings.get(identity, PluginSettings()).model_dump(mode="json")

    # ----------------------------------------------------------------- models

    def _model(self, data: dict[str, Any]) -> ScriptedModel:
        model = self.models.get(str(data.get("llm_model_uuid")))
        if model is None:
            raise NotFoundError(f"no model {data.get('llm_model_uuid')!r}")
        return model

    def _invoke_llm(self, data: dict[str, Any]) -> dict[str, Any]:
        message = self._model(data).answer(list(data.get("messages") or []))
        words = len(str(message.get("content") or "").split())
        usage = {"prompt_tokens": 1, "completion_tokens": words, "total_tokens": words + 1}
        return {"message": message, "usage": usage}

    async def _invoke_llm_stream(self, ctx: RequestContext) -> AsyncIterator[dict[str, Any]]:
        model = self._model(ctx.data)
        for chunk in model.chunks(model.answer(list(ctx.data.get("messages") or []))):
            yield {"chunk": chunk}

    def _count_tokens(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"tokens": self._model(data).count_tokens(list(data.get("messages") or []))}

    # ----------------------------------------------------------------- tools

    def _tool(self, data: dict[str, Any]) -> HostTool:
        tool = self.tools.get(str(data.get("tool_name")))
        if tool is None:
            raise NotFoundError(f"Tool {data.get('tool_name')} not found")
        return tool

    async def _call_tool(self, data: dict[str, Any]) -> dict[str, Any]:
        tool = self._tool(data)
        if data.get("run_id"):  # the run API's form (parameters checked by the gate)
            return {"result": await tool.call(dict(data.get("parameters") or {}))}
        parameters = data.get("tool_parameters") or {}
        if not isinstance(parameters, dict):
            raise InvalidParamsError("tool_parameters must be an object")
        return {"tool_response": await tool.call(cast(dict[str, Any], parameters))}

    def _tool_detail(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"tool": self._tool(data).detail()}

    # ----------------------------------------------------------------- storage

    def _key(self, data: dict[str, Any]) -> tuple[str, str, str]:
        return (str(data.get("owner_type")), str(data.get("owner")), str(data.get("key")))

    def _set_storage(self, data: dict[str, Any]) -> dict[str, Any]:
        self.storage[self._key(data)] = base64.b64decode(str(data.get("value_base64", "")))
        return {}

    def _get_storage(self, data: dict[str, Any]) -> dict[str, Any]:
        key = self._key(data)
        if key not in self.storage:
            raise NotFoundError(f"Storage with key {key[2]} not found")
        return {"value_base64": base64.b64encode(self.storage[key]).decode("ascii")}

    def _storage_keys(self, data: dict[str, Any]) -> dict[str, Any]:
        owner = (str(data.get("owner_type")), str(data.get("owner")))
        return {"keys": [k for (t, o, k) in self.storage if (t, o) == owner]}

    def _delete_storage(self, data: dict[str, Any]) -> dict[str, Any]:
        self.storage.pop(self._key(data), None)
        return {}
