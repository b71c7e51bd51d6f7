"""A plugin written against the 0.7.18 API, scaffolded by the reference CLI, served by
real ``lbp rt`` and ``lbp run`` processes of this package.

Runner (generator and coroutine styles), tool and command calls go through the runtime
as the host sends them; the ``boxer`` runner binds a Box and runs a command in it
through the host's ``exec`` tool, against a real ``lbp box`` on nsjail. Skipped without
the reference SDK (``LBP_REFERENCE_PYTHON``) unless ``LBP_REQUIRE_REFERENCE=1``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from box_runtime.child import start_box
from langbot_plugin.host import HostTool, LocalHost, ScriptedModel
from tests.box.helpers import jail_state, require_nsjail
from tests.e2e.processes import (
    command_context,
    host_for,
    lbp_rt,
    lbp_run,
    plugin_listed,
    run_context,
    wait_until,
)
from tests.support.scaffold import AUTHOR, NAME, scaffold_plugin

pytestmark = pytest.mark.anyio

IDENTITY = f"{AUTHOR}/{NAME}"


def _host() -> LocalHost:
    local = LocalHost(models={"m1": ScriptedModel(lambda msgs: f"FAKE: {msgs[-1]['content']}")})
    local.add_tool(HostTool("event_reply", lambda p: {"delivered": p.get("text")}))
    return local


async def test_a_07_scaffolded_plugin_serves_runners_tools_and_commands(tmp_path: Path) -> None:
    plugin = scaffold_plugin(tmp_path)
    local = _host()
    async with lbp_rt(tmp_path) as runtime, host_for(runtime, local) as host:
        key = await host.get_debug_key()
        async with lbp_run(plugin, runtime.debug_url, key):
            await wait_until(lambda: plugin_listed(host, IDENTITY))
            runners = {r["manifest"]["id"] for r in await host.list_runners()}
            assert runners == {f"plugin:{IDENTITY}/{n}" for n in ("chat", "pinger", "boxer")}

            items = [
                i async for i in host.run_runner(AUTHOR, NAME, "chat", run_context("hi there"))
            ]
            assert items[-1]["type"] == "run.completed"
            assert items[-1]["data"]["message"]["content"] == "echo-runner: hi there"

            # The coroutine style: nothing yielded; the context logs and replies.
            outcome = await local.run(host, AUTHOR, NAME, "pinger", "ping")
            assert outcome.status == "completed", outcome.error
            assert local.tools["event_reply"].calls == [{"text": "pong: ping"}]
            kinds = [r.type for r in outcome.results]
            assert kinds == [
                "processor.log",
                "tool.call.started",
                "tool.call.completed",
                "run.completed",
            ]

            answer = await host.call_tool(
                "echo_tool", {"x": 1}, session=command_context("x")["session"], query_id=1
            )
            assert answer == {"echo": {"x": 1}}

            hello = await host.execute_command(command_context("hello bob"))
            assert [r["text"] for r in hello] == ["hello, bob"]
            ask = await host.execute_command(command_context("ask what is 2+2"))
            assert [r["text"] for r in ask] == ["LLM said: FAKE: what is 2+2"]


@asynccontextmanager
async def _nsjail_box() -> AsyncGenerator[str]:
    """A real ``lbp box`` on the nsjail backend; its RPC URL."""
    require_nsjail()
    for state in jail_state("lbp-v07-box-"):
        config = {
            "backend": "nsjail",
            "state_dir": str(state / "state"),
            "local": {"allowed_mount_roots": [str(state / "mounts")]},
        }
        async with start_box(config=config, log=None) as box:
            yield box.url


async def test_a_07_runner_binds_a_box_and_runs_a_command_in_it(tmp_path: Path) -> None:
    from box_runtime.client import BoxClient
    from box_runtime.scope import scoped_session_id

    plugin = scaffold_plugin(tmp_path)
    local = _host()
    async with (
        _nsjail_box() as box_url,
        BoxClient.connect(box_url) as box,
        lbp_rt(tmp_path) as runtime,
    ):
        service = local.with_box(box, scope_id=scoped_session_id)
        async with host_for(runtime, local) as host:
            key = await host.get_debug_key()
            async with lbp_run(plugin, runtime.debug_url, key):
                await wait_until(lambda: plugin_listed(host, IDENTITY))
                options: dict[str, Any] = {"available_apis": ["box"], "conversation_id": "c-42"}
                outcome = await local.run(host, AUTHOR, NAME, "boxer", "go", **options)
                assert outcome.status == "completed", outcome.error
                box_id, said = outcome.text.split(" ", 1)
                assert said == "sandbox-42 in /workspace"
                run_id = outcome.run_id
                boxed = [e for e in await local.runs.audit.entries(run_id) if e["kind"] == "box"]
                assert ("box.bind", box_id) in [(e["action"], e["resource"]) for e in boxed]
                assert service.bound == {}  # released with the run
                assert box_id.startswith("lb-box-")  # the host-owned scope, not the key
                session = local.runs.registry.get(run_id)
                assert session is not None
                assert box_id == service.box_of(session)

                # Without the box API the same runner is refused before anything runs.
                refused = await local.run(host, AUTHOR, NAME, "boxer", "go")
                assert refused.status == "failed"
                assert "box is not available" in str(refused.error)
