"""A client for ``lbp rt``'s control connection, shaped after the released host."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from langbot_plugin.protocol import control_link as ctl
from langbot_plugin.protocol.containers import PluginContainer
from langbot_plugin.protocol.handshake import DEFAULT_WORKER_POLICY, RuntimeConfig, RuntimeIdentity
from langbot_plugin.protocol.run_audit import GET_RUN_AUDIT, GetRunAuditParams, RunAudit
from langbot_plugin.protocol.runner_declaration import DECLARATION_KEY
from langbot_plugin.protocol.scope import ActionScope, InstallationBinding, bridge_binding
from langbot_plugin.protocol.spec import ActionSpec
from langbot_plugin.rpc import Dispatcher, RPCSession, Transport
from langbot_plugin.rpc.reserved import PING
from langbot_plugin.rpc.transport_ws import connect_ws

__all__ = ["PluginRuntimeClient", "default_workspace"]

TOKEN_HEADER = "X-LangBot-Plugin-Runtime-Token"

R = TypeVar("R")


def default_workspace(workspace_uuid: str | None = None) -> ActionScope:
    """An OSS-style workspace scope (``instance_<X>`` / ``<X>``, generation 1)."""
    ws = workspace_uuid or str(uuid.uuid4())
    return ActionScope(instance_uuid=f"instance_{ws}", workspace_uuid=ws, placement_generation=1)


class PluginRuntimeClient:
    """Typed calls to a plugin runtime, scoped to one workspace."""

    def __init__(self, session: RPCSession, workspace: ActionScope) -> None:
        self.session = session
        self.workspace = workspace
        bridge = bridge_binding(workspace)
        assert bridge is not None
        self.bridge = bridge

    @classmethod
    @asynccontextmanager
    async def over(
        cls,
        transport: Transport,
        services: Dispatcher | None,
        *,
        workspace: ActionScope | None = None,
        handshake: bool = True,
    ) -> AsyncGenerator[PluginRuntimeClient]:
        """Run a client over ``transport``, serving ``services`` to the runtime."""
        async with RPCSession(transport, services, name="runtime").running() as session:
            client = cls(session, workspace or default_workspace())
            if handshake:
                await client.handshake()
            yield client

    @classmethod
    @asynccontextmanager
    async def connect(
        cls,
        url: str,
        services: Dispatcher | None,
        *,
        token: str | None = None,
        workspace: ActionScope | None = None,
        handshake: bool = True,
    ) -> AsyncGenerator[PluginRuntimeClient]:
        headers = {TOKEN_HEADER: token} if token else None
        async with (
            connect_ws(url, headers=headers) as transport,
            cls.over(transport, services, workspace=workspace, handshake=handshake) as client,
        ):
            yield client

    # ------------------------------------------------------------------ handshake

    def runtime_config(self, **fields: Any) -> RuntimeConfig:
        """The handshake this client sends: this workspace's instance, LangBot's default
        worker policy, the ``oss_dev`` profile; ``fields`` replace any of them."""
        instance = self.workspace.instance_uuid or "unknown"
        identity = RuntimeIdentity(instance_uuid=instance, runtime_id=f"{instance}:plugin-runtime")
        defaults: dict[str, Any] = {
            "runtime_identity": identity,
            "worker_policy": DEFAULT_WORKER_POLICY,
            "runtime_profile": "oss_dev",
        }
        return RuntimeConfig.model_validate({**defaults, **fields})

    async def handshake(self, config: RuntimeConfig | None = None) -> None:
        """What the released host does on every (re)connect."""
        await self.session.call(PING, timeout=10)
        await ctl.SET_RUNTIME_CONFIG.call(self.session, config or self.runtime_config())
        await self.list_plugins()
        await ctl.RECONCILE_PLUGIN_INSTALLATIONS.call(
            self.session, ctl.ReconcileParams(installations=[])
        )

    def _context(self, scope: ActionScope | None) -> dict[str, Any]:
        return (scope or self.bridge).as_context()

    # ------------------------------------------------------------------ installations

    def binding_for(self, installation_uuid: str, digest: str, revision: int = 1) -> ActionScope:
        """An installation binding in this client's workspace (checked in its strict form,
        as the host builds one)."""
        fields = {
            **self.workspace.workspace_context(),
            "installation_uuid": installation_uuid,
            "runtime_revision": revision,
            "artifact_digest": digest,
        }
        return ActionScope.of(InstallationBinding.model_validate(fields))

    async def install_package(
        self,
        content: bytes,
        *,
        installation_uuid: str | None = None,
        revision: int = 1,
        enabled: bool = True,
        execution_mode: ctl.ExecutionMode = "dedicated",
    ) -> tuple[ActionScope, ctl.ApplyInstallationResult]:
        """Send a ``.lbpkg`` and apply it, the way the host installs a plugin
        (``execution_mode="shared-runtime-v1"``: in a worker shared with others)."""
        digest = hashlib.sha256(content).hexdigest()
        binding = self.binding_for(installation_uuid or str(uuid.uuid4()), digest, revision)
        context = binding.as_context()
        key = await self.session.send_file(content, suffix="lbpkg", context=context)
        params = {"enabled": enabled, "execution_mode": execution_mode, "artifact_file_key": key}
        result = await ctl.APPLY_PLUGIN_INSTALLATION.call(self.session, params, context=context)
        return binding, result

    async def apply_installation(
        self,
        binding: ActionScope,
        *,
        enabled: bool = True,
        execution_mode: ctl.ExecutionMode = "dedicated",
    ) -> ctl.ApplyInstallationResult:
        """Re-apply an installation without sending its package (config change, enable)."""
        return await ctl.APPLY_PLUGIN_INSTALLATION.call(
            self.session,
            {"enabled": enabled, "execution_mode": execution_mode},
            context=binding.as_context(),
        )

    async def remove_installation(self, binding: ActionScope) -> None:
        await ctl.REMOVE_PLUGIN_INSTALLATION.call(self.session, context=binding.as_context())

    async def reconcile(self, bindings: list[ActionScope]) -> ctl.ReconcileResult:
        desired = [{"binding": b.as_context(), "enabled": True} for b in bindings]
        return await ctl.RECONCILE_PLUGIN_INSTALLATIONS.call(
            self.session, {"installations": desired}
        )

    async def get_plugin_logs(
        self,
        author: str,
        name: str,
        *,
        scope: ActionScope | None = None,
        limit: int = 200,
        level: str | None = None,
    ) -> list[dict[str, Any]]:
        params = ctl.PluginLogsParams(
            plugin_author=author, plugin_name=name, limit=limit, level=level
        )
        result = await ctl.GET_PLUGIN_LOGS.call(self.session, params, context=self._context(scope))
        return result.logs

    # ------------------------------------------------------------------ actions

    async def get_debug_key(self) -> str:
        info = await ctl.GET_DEBUG_INFO.call(
            self.session, context=self.workspace.workspace_context()
        )
        return info.plugin_debug_key

    async def list_plugins(self, scope: ActionScope | None = None) -> list[PluginContainer]:
        result = await ctl.LIST_PLUGINS.call(self.session, context=self._context(scope))
        return result.plugins

    async def get_plugin_info(
        self, author: str, name: str, scope: ActionScope | None = None
    ) -> PluginContainer | None:
        result = await ctl.GET_PLUGIN_INFO.call(
            self.session, {"author": author, "plugin_name": name}, context=self._context(scope)
        )
        return result.plugin

    async def _listing(self, spec: ActionSpec[Any, R], scope: ActionScope | None) -> R:
        """A listing of every plugin of ``scope`` (``include_plugins: null``)."""
        return await spec.call(
            self.session, {"include_plugins": None}, context=self._context(scope)
        )

    async def list_runners(self, scope: ActionScope | None = None) -> list[dict[str, Any]]:
        return (await self._listing(ctl.LIST_RUNNERS, scope)).runners

    async def runner_declaration(
        self, author: str, name: str, runner: str, scope: ActionScope | None = None
    ) -> dict[str, Any] | None:
        """The Protocol v1 declaration the runtime lists for one runner (``None`` when
        the runner declares nothing of Protocol v1)."""
        for entry in await self.list_runners(scope):
            names = (entry.get("plugin_author"), entry.get("plugin_name"), entry.get("runner_name"))
            if names == (author, name, runner):
                declared = entry.get(DECLARATION_KEY)
                return declared if isinstance(declared, dict) else None  # pyright: ignore[reportUnknownVariableType]
        return None

    async def run_runner(
        self,
        author: str,
        name: str,
        runner: str,
        context: dict[str, Any],
        *,
        scope: ActionScope | None = None,
        timeout: float | None = 300.0,
        name_on_wire: str | None = None,
    ) -> AsyncGenerator[dict[str, Any]]:
        """Yield a run's results; closing the generator early cancels the run.
        ``name_on_wire="run_agent"`` sends the 0.5 dialect's name."""
        params = {
            "plugin_author": author,
            "plugin_name": name,
            "runner_name": runner,
            "context": context,
        }
        async for item in ctl.RUN_RUNNER.iterate(
            self.session, params, name=name_on_wire, context=self._context(scope), timeout=timeout
        ):
            yield item.model_dump()

    async def get_run_audit(self, run_id: str, *, scope: ActionScope | None = None) -> RunAudit:
        """The refusals the runtime and the SDK made for a run (``get_run_audit``; a
        runtime that does not know the action answers ``action_not_found``). Ask in the
        run's workspace (``scope``, as given to :meth:`run_runner`): the runtime answers
        another workspace's run as unknown."""
        return await GET_RUN_AUDIT.call(
            self.session, GetRunAuditParams(run_id=run_id), context=self._context(scope)
        )

    async def list_commands(self, scope: ActionScope | None = None) -> list[dict[str, Any]]:
        return [c.model_dump() for c in (await self._listing(ctl.LIST_COMMANDS, scope)).commands]

    async def execute_command(
        self, command_context: dict[str, Any], *, scope: ActionScope | None = None
    ) -> list[dict[str, Any]]:
        params = {"command_context": command_context, "include_plugins": None}
        return [
            item.model_dump()
            async for item in ctl.EXECUTE_COMMAND.iterate(
                self.session, params, context=self._context(scope)
            )
        ]

    async def list_tools(self, scope: ActionScope | None = None) -> list[dict[str, Any]]:
        return [t.model_dump() for t in (await self._listing(ctl.LIST_TOOLS, scope)).tools]

    async def call_tool(
        self,
        tool_name: str,
        parameters: dict[str, Any],
        *,
        scope: ActionScope | None = None,
        **extra: Any,
    ) -> Any:
        params = {
            "tool_name": tool_name,
            "tool_parameters": parameters,
            "include_plugins": None,
            **extra,
        }
        result = await ctl.CALL_TOOL.call(self.session, params, context=self._context(scope))
        return result.tool_response

    async def call_component(
        self,
        spec: ActionSpec[Any, R],
        author: str,
        name: str,
        params: Mapping[str, Any] | None = None,
        *,
        scope: ActionScope | None = None,
    ) -> R:
        """A component call (``protocol.component_calls``) to the plugin ``author/name``."""
        data = {"plugin_author": author, "plugin_name": name, **dict(params or {})}
        return await spec.call(self.session, data, context=self._context(scope))

    async def emit_event(
        self, event_context: dict[str, Any], *, scope: ActionScope | None = None
    ) -> ctl.HostEmitEventResult:
        params = {"event_context": event_context, "include_plugins": None}
        return await ctl.EMIT_EVENT.call(self.session, params, context=self._context(scope))
