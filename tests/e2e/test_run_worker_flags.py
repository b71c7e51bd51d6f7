"""``lbp run`` with the flags the reference runtimes start workers with: ``-s``,
``--prod``, ``--tag``, ``--pypi-index-url``, ``--pypi-trusted-host``; real processes."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from langbot_plugin.protocol import plugin_link as plug
from langbot_plugin.protocol.spec import ActionTable, Empty
from langbot_plugin.rpc import RequestContext, RPCSession
from langbot_plugin.rpc.transport_stdio import pipe_transport
from langbot_plugin.runtime.workers import spawn_linked
from tests.e2e.processes import LBP, host_for, lbp_rt
from tests.support.slot_plugins import write_slot_plugin
from tests.support.waiting import PATIENCE

pytestmark = pytest.mark.anyio

CAPABILITY = "c" * 48
KEYS = [
    "LANGBOT_PLUGIN_PYPI_INDEX_URL",
    "PIP_INDEX_URL",
    "LANGBOT_PLUGIN_PYPI_TRUSTED_HOST",
    "PIP_TRUSTED_HOST",
    "LANGBOT_PLUGIN_REGISTRATION_CAPABILITY",
]


async def test_stdio_prod_worker_registers_serves_and_ends_with_stdin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_slot_plugin(tmp_path, "alpha")
    monkeypatch.setenv("LANGBOT_PLUGIN_REGISTRATION_CAPABILITY", CAPABILITY)
    command = [
        *LBP,
        "run",
        "-s",
        "--prod",
        "--tag",
        "tester/alpha",
        "--pypi-index-url",
        "http://127.0.0.1:9/simple",
        "--pypi-trusted-host",
        "127.0.0.1, pypi.internal",
    ]
    # started as the reference runtime starts it: the capability in its environment
    process, from_child, to_child = await spawn_linked(command, folder, dict(os.environ))
    registered: list[plug.RegisterPluginParams] = []
    announced = anyio.Event()

    async def register(params: plug.RegisterPluginParams, ctx: RequestContext) -> Empty:
        registered.append(params)
        announced.set()
        return Empty()

    table = ActionTable()
    table.add(plug.REGISTER_PLUGIN, register)
    assert process.stderr is not None
    errors: list[bytes] = []
    async with anyio.create_task_group() as tg:

        async def drain() -> None:
            assert process.stderr is not None
            async for chunk in process.stderr:
                errors.append(chunk)

        tg.start_soon(drain)
        async with pipe_transport(from_child, to_child, frame_threshold=None) as transport:
            session = RPCSession(transport, table, name="test-runtime")
            tg.start_soon(session.serve)
            with anyio.fail_after(30):
                await announced.wait()
            [params] = registered
            assert (params.prod_mode, params.registration_capability) == (True, CAPABILITY)
            assert params.plugin_container.identity == "tester/alpha"
            assert params.plugin_container.status == "mounted"  # as the reference registers

            await plug.INITIALIZE_PLUGIN.call(session, {"plugin_settings": {}})
            answer: dict[str, Any] = (
                await plug.CALL_TOOL.call(
                    session,
                    {"tool_name": "whoami", "tool_parameters": {"do": "env", "keys": KEYS}},
                )
            ).tool_response
            assert answer == {
                "LANGBOT_PLUGIN_PYPI_INDEX_URL": "http://127.0.0.1:9/simple",
                "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
                "LANGBOT_PLUGIN_PYPI_TRUSTED_HOST": "127.0.0.1, pypi.internal",
                "PIP_TRUSTED_HOST": "127.0.0.1 pypi.internal",
                # taken out of the environment before the plugin's code runs
                "LANGBOT_PLUGIN_REGISTRATION_CAPABILITY": None,
            }
            session.close()  # closes our end of its stdin: the worker ends
        with anyio.fail_after(PATIENCE):
            assert await process.wait() == 0
        tg.cancel_scope.cancel()
    assert b"process label: tester/alpha" in b"".join(errors)


async def test_prod_over_websocket_is_refused_by_our_runtime_at_once(tmp_path: Path) -> None:
    folder = write_slot_plugin(tmp_path, "beta")
    async with lbp_rt(tmp_path) as runtime, host_for(runtime):
        env = {**os.environ, "LANGBOT_PLUGIN_REGISTRATION_CAPABILITY": CAPABILITY}
        with anyio.fail_after(30):
            done = await anyio.run_process(
                [*LBP, "run", "--prod", "--runtime-url", runtime.debug_url],
                cwd=folder,
                env=env,
                check=False,
            )
    assert done.returncode == 1  # no reconnect loop
    assert b"refused this production registration" in done.stderr


async def test_prod_without_a_capability_is_a_usage_error(tmp_path: Path) -> None:
    folder = write_slot_plugin(tmp_path, "gamma")
    env = {k: v for k, v in os.environ.items() if k != "LANGBOT_PLUGIN_REGISTRATION_CAPABILITY"}
    done = await anyio.run_process(
        [sys.executable, "-m", "langbot_plugin.cli.__init__", "run", "--prod"],
        cwd=folder,
        env=env,
        check=False,
    )
    assert done.returncode == 2
    assert b"LANGBOT_PLUGIN_REGISTRATION_CAPABILITY" in done.stderr


async def test_stdio_worker_serves_slots_of_its_folder_as_the_reference_shares_one(
    tmp_path: Path,
) -> None:
    """The reference starts a shared worker with the same command line and attaches
    installations of that package as slots (no ``plugin_dir``): each is its own."""
    from langbot_plugin.protocol import slots

    folder = write_slot_plugin(tmp_path, "delta")
    process, from_child, to_child = await spawn_linked(
        [*LBP, "run", "-s", "--prod"], folder, dict(os.environ)
    )
    async with (
        anyio.create_task_group() as tg,
        pipe_transport(from_child, to_child, frame_threshold=None) as transport,
    ):
        assert process.stderr is not None
        tg.start_soon(_discard, process.stderr)
        session = RPCSession(transport, None, name="test-runtime")
        tg.start_soon(session.serve)
        first, second = ({"installation_uuid": uuid} for uuid in ("i-1", "i-2"))
        for context in (first, second):
            await slots.ATTACH_PLUGIN_SLOT.call(session, {"plugin_settings": {}}, context=context)
        counts: list[int] = []
        for context in (first, first, second):
            answer = await plug.CALL_TOOL.call(
                session, {"tool_name": "whoami", "tool_parameters": {}}, context=context
            )
            counts.append(answer.tool_response["count"])
        assert counts == [1, 2, 1]  # two slots, two copies of the module state
        described = await slots.GET_PLUGIN_SLOT_CONTAINER.call(session, context=second)
        assert described.plugin_container.identity == "tester/delta"
        session.close()
        with anyio.fail_after(PATIENCE):
            assert await process.wait() == 0
        tg.cancel_scope.cancel()


async def _discard(stream: Any) -> None:
    async for _ in stream:
        pass
