"""Run-scoped calls are checked in the runtime before they reach the host."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from langbot_plugin.host import LocalHost
from langbot_plugin.host.run_context import build_run_context, make_resources
from langbot_plugin.rpc import NotFoundError, PermissionDeniedError
from langbot_plugin.stack import host_here
from tests.runtime.peers import ScriptedPlugin, running_runtime

pytestmark = pytest.mark.anyio


def granted_context(run_id: str, *, deadline: float | None = None) -> dict[str, Any]:
    resources = make_resources(
        models={"scripted-model": ["invoke"], "silent-model": []},
        tools={"adder": ["detail"], "quiet": []},
        plugin_storage=True,
    )
    return build_run_context(
        "forever",
        run_id=run_id,
        resources=resources,
        available_apis={"state": True, "history_page": False},
        deadline_at=deadline,
        timeout=None,
    )


async def refusal(session: Any, action: str, data: dict[str, Any]) -> str:
    with pytest.raises(PermissionDeniedError) as info:
        await session.call(action, data)
    return info.value.code


async def test_each_refusal_has_its_code() -> None:
    local = LocalHost()
    plugin = ScriptedPlugin()
    async with (
        running_runtime() as runtime,
        host_here(runtime, local) as host,
    ):
        key = await host.get_debug_key()
        async with plugin.connected(runtime, key) as session, anyio.create_task_group() as tg:
            started = anyio.Event()

            async def run() -> None:
                async for _ in host.run_runner(
                    "tester", "echoplug", "echo", granted_context("run-7")
                ):
                    started.set()

            tg.start_soon(run)
            await started.wait()

            llm = {"llm_model_uuid": "scripted-model", "messages": []}
            # granted: reaches the host
            assert (await session.call("invoke_llm", {**llm, "run_id": "run-7"}))["message"]
            assert (
                await refusal(session, "invoke_llm", {**llm, "run_id": "run-unknown"})
                == "run_not_live"
            )
            assert (
                await refusal(session, "invoke_llm_stream", {**llm, "run_id": "run-7"})
                == "resource_not_granted"
            )
            # empty operations are the kind's defaults (the released host's rule), whatever
            # the manifest declares: the runtime passes them on (the host then answers that
            # it has no such model, no such tool) ...
            silent = {"llm_model_uuid": "silent-model", "messages": [], "run_id": "run-7"}
            with pytest.raises(NotFoundError):
                await session.call("invoke_llm", silent)
            with pytest.raises(NotFoundError):
                await session.call("count_tokens", silent)
            quiet = {"tool_name": "quiet", "parameters": {}, "run_id": "run-7"}
            with pytest.raises(NotFoundError):
                await session.call("call_tool", quiet)
            # ... but only on what was listed
            other = {"llm_model_uuid": "other-model", "messages": [], "run_id": "run-7"}
            assert await refusal(session, "invoke_llm", other) == "resource_not_granted"
            call = {"tool_name": "adder", "parameters": {}, "run_id": "run-7"}
            assert await refusal(session, "call_tool", call) == "resource_not_granted"
            assert (
                await refusal(session, "history_page", {"run_id": "run-7"}) == "api_not_available"
            )
            ws = {"key": "k", "value_base64": "", "run_id": "run-7"}
            assert await refusal(session, "set_workspace_storage", ws) == "resource_not_granted"
            # reading, deleting and listing are held to the grant as much as writing
            for action in ("get_workspace_storage", "delete_workspace_storage"):
                data = {"key": "k", "run_id": "run-7"}
                assert await refusal(session, action, data) == "resource_not_granted", action
            keys = {"run_id": "run-7"}
            assert (
                await refusal(session, "get_workspace_storage_keys", keys) == "resource_not_granted"
            )
            assert local.calls_of("get_workspace_storage") == []
            # binding storage (Protocol v1) is not granted: refused before the host
            for action in ("get_binding_storage", "get_binding_storage_keys"):
                data = {"key": "k", "run_id": "run-7"}
                assert await refusal(session, action, data) == "resource_not_granted", action
            assert local.calls_of("get_binding_storage") == []
            # plugin storage is granted: each of the four reaches the host
            mine = {"key": "k", "run_id": "run-7"}
            await session.call("set_plugin_storage", {**mine, "value_base64": "aGk="})
            assert (await session.call("get_plugin_storage", mine))["value_base64"] == "aGk="
            assert (await session.call("get_plugin_storage_keys", {"run_id": "run-7"}))["keys"] == [
                "k"
            ]
            await session.call("delete_plugin_storage", mine)
            assert len(local.calls_of("invoke_llm")) == 2
            tg.cancel_scope.cancel()

        # a second plugin cannot use the first plugin's run
        intruder = ScriptedPlugin(name="intruder")
        async with (
            plugin.connected(runtime, key),
            intruder.connected(runtime, key) as other_session,
            anyio.create_task_group() as tg,
        ):
            started = anyio.Event()

            async def run_again() -> None:
                async for _ in host.run_runner(
                    "tester", "echoplug", "echo", granted_context("run-8")
                ):
                    started.set()

            tg.start_soon(run_again)
            await started.wait()
            data = {"llm_model_uuid": "scripted-model", "messages": [], "run_id": "run-8"}
            assert await refusal(other_session, "invoke_llm", data) == "run_not_owned"
            tg.cancel_scope.cancel()


async def test_a_finished_or_expired_run_is_refused() -> None:
    plugin = ScriptedPlugin()
    async with (
        running_runtime() as runtime,
        host_here(runtime, LocalHost()) as host,
    ):
        key = await host.get_debug_key()
        async with plugin.connected(runtime, key) as session:
            context = {**granted_context("run-9"), "input": {"text": "done"}}
            assert [i async for i in host.run_runner("tester", "echoplug", "echo", context)]
            data = {"llm_model_uuid": "scripted-model", "messages": [], "run_id": "run-9"}
            assert await refusal(session, "invoke_llm", data) == "run_not_live"

            async with anyio.create_task_group() as tg:
                started = anyio.Event()
                past = granted_context("run-10", deadline=time.time() - 1)

                async def run() -> None:
                    async for _ in host.run_runner("tester", "echoplug", "echo", past):
                        started.set()

                tg.start_soon(run)
                await started.wait()
                data = {"llm_model_uuid": "scripted-model", "messages": [], "run_id": "run-10"}
                assert await refusal(session, "invoke_llm", data) == "deadline_exceeded"
                tg.cancel_scope.cancel()
