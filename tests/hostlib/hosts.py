"""A host written the way the released LangBot 4.11.2 host uses the host-side library.

``HostHandler`` mirrors ``langbot/pkg/plugin/handler.py``: a :class:`Handler` subclass
that registers what a runtime asks of the host with ``@self.action(...)``, returns
``ActionResponse``, scopes outbound calls with a context variable
(``installation_scope`` over ``resolve_outbound_action_context``) and reads the inbound
context with ``current_action_context``. ``spawn`` mirrors ``pkg/plugin/connector.py``:
the runtime is started by a :class:`StdioClientController` and the handler runs in a
task beside the callback that pings it and pushes the runtime config.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
from collections.abc import AsyncGenerator, Generator
from pathlib import Path
from typing import Any

import anyio

from langbot_plugin.entities.io.actions.enums import (
    CommonAction,
    LangBotToRuntimeAction,
    PluginToRuntimeAction,
    RuntimeToLangBotAction,
)
from langbot_plugin.entities.io.context import (
    ActionContext,
    InstallationBinding,
    PluginWorkerPolicy,
    RuntimeConfig,
    RuntimeIdentity,
)
from langbot_plugin.protocol.scope import ActionScope, bridge_binding
from langbot_plugin.runtime.io import handler
from langbot_plugin.runtime.io.connection import Connection
from langbot_plugin.runtime.io.controllers.stdio.client import StdioClientController
from tests.conftest import free_port

INSTANCE = "instance_0b7c2f1e-5a6d-4e3f-9a8b-7c6d5e4f3a2b"
WORKSPACE = ActionContext(
    instance_uuid=INSTANCE, workspace_uuid="0b7c2f1e-5a6d-4e3f-9a8b-7c6d5e4f3a2b"
)
_UNSET = object()


def bridge() -> InstallationBinding:
    """The binding the host addresses debug plugins of its workspace with."""
    scope = bridge_binding(ActionScope.model_validate(WORKSPACE.model_dump()))
    assert scope is not None
    return InstallationBinding.model_validate(scope.as_context())


class HostHandler(handler.Handler):
    """What the released host's RuntimeConnectionHandler does with the base class."""

    def __init__(self, connection: Connection) -> None:
        super().__init__(connection, self._disconnected)
        self.disconnected = anyio.Event()
        self.seen: list[tuple[str, ActionContext | None, dict[str, Any]]] = []
        self._outbound: contextvars.ContextVar[object] = contextvars.ContextVar(
            f"outbound_{id(self)}", default=_UNSET
        )

        @self.action(RuntimeToLangBotAction.INITIALIZE_PLUGIN_SETTINGS)
        async def initialize_plugin_settings(data: dict[str, Any]) -> handler.ActionResponse:
            self.seen.append(("initialize", self.current_action_context, data))
            return handler.ActionResponse.success(data={})

        @self.action(RuntimeToLangBotAction.GET_PLUGIN_SETTINGS)
        async def get_plugin_settings(data: dict[str, Any]) -> handler.ActionResponse:
            self.seen.append(("settings", self.current_action_context, data))
            return handler.ActionResponse.success(
                data={
                    "enabled": True,
                    "priority": 0,
                    "plugin_config": {},
                    "install_source": "debug",
                    "install_info": {},
                }
            )

        @self.action(PluginToRuntimeAction.GET_LLM_MODELS)
        async def get_llm_models(data: dict[str, Any]) -> handler.ActionResponse:
            return handler.ActionResponse.success(data={"llm_models": ["m1"]})

        @self.action(PluginToRuntimeAction.INVOKE_LLM)
        async def invoke_llm(data: dict[str, Any]) -> handler.ActionResponse:
            self.seen.append(("invoke_llm", self.current_action_context, data))
            question = data["messages"][-1]["content"]
            if question == "refuse":
                return handler.ActionResponse.error(message="model quota exceeded")
            return handler.ActionResponse.success(
                data={"message": {"role": "assistant", "content": f"FAKE-LLM: {question}"}}
            )

    async def _disconnected(self, _: handler.Handler) -> bool:
        self.disconnected.set()
        return False

    @contextlib.contextmanager
    def installation_scope(self, binding: InstallationBinding | None) -> Generator[None]:
        token = self._outbound.set(binding)
        try:
            yield
        finally:
            self._outbound.reset(token)

    def resolve_outbound_action_context(
        self, action_context: ActionContext | dict[str, Any] | None
    ) -> ActionContext | None:
        if action_context is not None:
            return super().resolve_outbound_action_context(action_context)
        scoped = self._outbound.get()
        if scoped is not _UNSET:
            return scoped  # type: ignore[return-value]
        return self.current_action_context

    async def handshake(self) -> None:
        with self.installation_scope(None):
            assert await self.call_action(CommonAction.PING, {}, timeout=30) == {"message": "pong"}
            config = RuntimeConfig(
                runtime_identity=RuntimeIdentity(
                    instance_uuid=INSTANCE, runtime_id=f"{INSTANCE}:plugin-runtime"
                ),
                worker_policy=PluginWorkerPolicy(
                    max_cpus=1,
                    max_memory_mb=512,
                    max_pids=128,
                    max_open_files=256,
                    max_file_size_mb=64,
                ),
            )
            await self.call_action(
                LangBotToRuntimeAction.SET_RUNTIME_CONFIG,
                config.model_dump(exclude_none=True),
                timeout=30,
            )


@contextlib.asynccontextmanager
async def spawn_runtime(
    tmp: Path,
) -> AsyncGenerator[tuple[HostHandler, StdioClientController, int]]:
    """``lbp rt -s`` started the way the host starts it, with a connected HostHandler."""
    debug_port = free_port()
    controller = StdioClientController(
        command=sys.executable,
        args=[
            "-m",
            "langbot_plugin.cli.__init__",
            "rt",
            "-s",
            "--ws-debug-port",
            str(debug_port),
            "--data-dir",
            str(tmp / "rt-data"),
        ],
        env=dict(__import__("os").environ.items()),
        working_dir=str(tmp),
    )
    ready: list[HostHandler] = []
    connected = anyio.Event()
    done = anyio.Event()

    async def new_connection(connection: Connection) -> None:
        host = HostHandler(connection)
        async with anyio.create_task_group() as tg:
            tg.start_soon(host.run)
            await host.handshake()
            ready.append(host)
            connected.set()
            await done.wait()
            await host.close()

    async with anyio.create_task_group() as tg:
        tg.start_soon(controller.run, new_connection)
        with anyio.fail_after(60):
            await connected.wait()
        try:
            yield ready[0], controller, debug_port
        finally:
            done.set()
