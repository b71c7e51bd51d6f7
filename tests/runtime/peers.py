"""Real RPC peers for runtime tests: the runtime in-process and a scripted plugin."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from langbot_plugin.rpc import RequestContext, Route, RouteTable, RPCSession
from langbot_plugin.rpc.transport_ws import connect_ws
from langbot_plugin.runtime.app import DEBUG_KEY_HEADER, PluginRuntime
from langbot_plugin.runtime.state import RuntimeOptions
from langbot_plugin.stack import runtime_here
from tests.conftest import free_port


@asynccontextmanager
async def running_runtime(**options: Any) -> AsyncGenerator[PluginRuntime]:
    """The runtime in this process, serving on free ports (``options`` over those)."""
    # A with block, not a cleanup after the yield: a failing test would otherwise leave
    # the folder to the garbage collector, whose ResourceWarning then fails a later test.
    with tempfile.TemporaryDirectory(prefix="lbp-rt-") as scratch:
        options.setdefault("data_dir", Path(scratch))
        opts = RuntimeOptions(
            host="127.0.0.1", control_port=free_port(), debug_port=free_port(), **options
        )
        async with runtime_here(opts) as runtime:
            yield runtime


def component(kind: str, name: str, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "owner": "builtin",
        "rel_path": f"components/{kind.lower()}/{name}.yaml",
        "manifest": {
            "apiVersion": "v1",
            "kind": kind,
            "metadata": {"name": name, "label": {"en_US": name.title()}},
            "spec": spec,
            "execution": {"python": {"path": f"{name}.py", "attr": name.title()}},
        },
    }


def container(author: str = "tester", name: str = "echoplug") -> dict[str, Any]:
    runner_spec = {
        "capabilities": {"streaming": True, "not_a_capability": True},
        "permissions": {"models": ["invoke", "teleport"]},
        "config": [{"name": "greeting", "type": "string", "default": "hi"}],
    }
    return {
        "debug": False,
        "install_source": "",
        "install_info": {},
        "manifest": {
            "owner": "builtin",
            "rel_path": "manifest.yaml",
            "manifest": {
                "apiVersion": "v1",
                "kind": "Plugin",
                "metadata": {
                    "author": author,
                    "name": name,
                    "version": "0.1.0",
                    "label": {"en_US": name},
                },
                "spec": {},
            },
        },
        "plugin_instance": None,
        "enabled": True,
        "priority": 0,
        "plugin_config": {},
        "status": "mounted",
        "components": [
            {"manifest": component("AgentRunner", "echo", runner_spec), "component_config": {}},
            {"manifest": component("Command", "hello"), "component_config": {}},
            {
                "manifest": component("Tool", "adder", {"parameters": {}, "llm_prompt": "add"}),
                "component_config": {},
            },
            {"manifest": component("EventListener", "listener"), "component_config": {}},
        ],
    }


class ScriptedPlugin:
    """A plugin process stand-in that speaks the plugin link over a real socket."""

    def __init__(self, author: str = "tester", name: str = "echoplug") -> None:
        self.container = container(author, name)
        self.settings: dict[str, Any] | None = None
        self.run_closed = anyio.Event()
        self.session: RPCSession | None = None

    def routes(self) -> RouteTable:
        async def initialize(ctx: RequestContext) -> dict[str, Any]:
            self.settings = ctx.data["plugin_settings"]
            self.container["status"] = "initialized"
            return {}

        async def get_container(ctx: RequestContext) -> dict[str, Any]:
            return self.container

        async def run_runner(ctx: RequestContext) -> AsyncIterator[dict[str, Any]]:
            context = ctx.data["context"]
            text = context["input"]["text"]
            try:
                if text == "forever":
                    n = 0
                    while True:
                        n += 1
                        yield {
                            "run_id": context["run_id"],
                            "type": "message.delta",
                            "data": {"chunk": {"role": "assistant", "content": "." * n}},
                            "sequence": n,
                        }
                        await anyio.sleep(0.01)
                yield {
                    "run_id": context["run_id"],
                    "type": "run.completed",
                    "data": {
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": f"echo-runner: {text}"},
                    },
                    "usage": None,
                    "sequence": 1,
                    "timestamp": None,
                }
            finally:
                self.run_closed.set()

        async def execute_command(ctx: RequestContext) -> AsyncIterator[dict[str, Any]]:
            params = ctx.data["command_context"]["crt_params"]
            if not params:
                yield {"command_response": {"text": None, "error": "a name is needed"}}
                return
            for name in params:
                yield {
                    "command_response": {"text": f"hello, {name}", "image_url": None, "error": None}
                }

        async def call_tool(ctx: RequestContext) -> dict[str, Any]:
            p = ctx.data["tool_parameters"]
            return {"tool_response": {"sum": p["a"] + p["b"]}}

        async def emit_event(ctx: RequestContext) -> dict[str, Any]:
            event_context = dict(ctx.data["event_context"])
            event_context["is_prevent_default"] = True
            return {"emitted": True, "event_context": event_context}

        async def shutdown(ctx: RequestContext) -> dict[str, Any]:
            return {}

        return RouteTable(
            initialize_plugin=Route(initialize),
            get_plugin_container=Route(get_container),
            run_runner=Route(run_runner, stream=True),
            execute_command=Route(execute_command, stream=True),
            call_tool=Route(call_tool),
            emit_event=Route(emit_event),
            shutdown=Route(shutdown),
        )

    @asynccontextmanager
    async def connected(self, runtime: PluginRuntime, key: str) -> AsyncGenerator[RPCSession]:
        url = f"ws://127.0.0.1:{runtime.options.debug_port}/plugin/debug/ws"
        async with (
            connect_ws(url, headers={DEBUG_KEY_HEADER: key}) as transport,
            RPCSession(transport, self.routes(), name="plugin").running() as session,
        ):
            self.session = session
            await session.call(
                "register_plugin",
                {"plugin_container": self.container, "prod_mode": False, "plugin_debug_key": key},
                timeout=30,
            )
            yield session
