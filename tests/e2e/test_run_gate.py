"""The run gate from inside a real worker: calls a runner makes during its run belong
to the run, work outside any run stays plugin-level, and a plugin that speaks the wire
past the SDK reaches exactly what ``docs/security.md`` says."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from langbot_plugin.host import LocalHost, PluginRuntimeClient, ScriptedModel
from langbot_plugin.host.run_context import make_resources
from langbot_plugin.protocol.scope import ActionScope
from tests.e2e.processes import command_context, host_for, lbp_rt, wait_until
from tests.support.pypi import package

pytestmark = pytest.mark.anyio

WARDEN = Path(__file__).resolve().parent.parent / "fixtures" / "plugins" / "warden"


def warden_host() -> LocalHost:
    return LocalHost(models={name: ScriptedModel() for name in ("m-a", "m-b")})


@asynccontextmanager
async def installed(
    tmp_path: Path,
) -> AsyncGenerator[tuple[LocalHost, PluginRuntimeClient, ActionScope]]:
    """A runtime with the warden plugin installed, and the host that drives it."""
    local = warden_host()
    async with lbp_rt(tmp_path) as runtime, host_for(runtime, local) as host:
        binding, _ = await host.install_package(package(WARDEN))
        yield local, host, binding


async def answer(
    local: LocalHost,
    host: PluginRuntimeClient,
    binding: ActionScope,
    runner: str,
    text: str,
    **options: Any,
) -> dict[str, Any]:
    options.setdefault("resources", make_resources(models={"m-a": ["invoke"]}))
    outcome = await local.run(host, "tester", "warden", runner, text, scope=binding, **options)
    assert outcome.status == "completed", outcome.error
    return json.loads(outcome.text)


async def test_calls_inside_a_run_are_held_to_it_and_work_outside_stays_plugin_level(
    tmp_path: Path,
) -> None:
    local = warden_host()
    async with lbp_rt(tmp_path) as runtime, host_for(runtime, local) as host:
        binding, result = await host.install_package(package(WARDEN))
        assert result.state == "running"

        # inside the run: the plugin-level API is the run's (as in 0.7.18), held to its
        # grants by the SDK's own check before anything is sent
        report = await answer(
            local, host, binding, "reach", "grants", config={"models": ["m-a", "m-b"]}
        )
        assert report == {
            "plugin:m-a": "ok",
            "plugin:m-b": "permission_denied.resource",
            "run_api": "permission_denied.resource",
        }
        # every plugin-level call of the run carried it to the host
        llm_calls = local.calls_of("invoke_llm")
        assert len(llm_calls) == 1
        assert llm_calls[0].data["llm_model_uuid"] == "m-a"
        assert llm_calls[0].data["run_id"]

        # outside any run (a command): the same call is a plugin-level one, as for any plugin
        replies = await host.execute_command(command_context("outside llm m-b"), scope=binding)
        assert replies[0]["text"] == "ok"
        assert "run_id" not in local.calls_of("invoke_llm")[-1].data

        # the task the run left behind ends with the run: refused before anything is sent
        sent = len(local.calls)
        await host.execute_command(command_context("outside release"), scope=binding)

        async def lingering() -> list[str]:
            lines = await host.get_plugin_logs("tester", "warden", scope=binding)
            return [line["text"] for line in lines if "lingering" in line["text"]]

        await wait_until(lambda: _two(lingering), 10)
        texts = " | ".join(await lingering())
        # refused by the worker itself (the runtime would also refuse, as "not live")
        assert "lingering plugin call: run_not_live (" in texts
        assert "lingering run call: run_not_live (" in texts
        assert texts.count("has ended") == 2, texts
        assert len(local.calls) == sent  # neither reached the host
        # both were reported at once: the runtime's record of the run keeps them
        record = await host.get_run_audit(llm_calls[0].data["run_id"])
        late = [(e.origin, e.action, e.code) for e in record.entries if e.code == "run_not_live"]
        assert late == [("sdk", "invoke_llm", "run_not_live"), ("sdk", "state_get", "run_not_live")]


async def _two(lines: Any) -> bool:
    return len(await lines()) >= 2


async def test_concurrent_runs_of_one_plugin_never_see_each_others_binding(
    tmp_path: Path,
) -> None:
    local = warden_host()
    async with lbp_rt(tmp_path) as runtime, host_for(runtime, local) as host:
        binding, _ = await host.install_package(package(WARDEN))
        reports: dict[str, dict[str, Any]] = {}

        async def run(mine: str, theirs: str) -> None:
            reports[mine] = await answer(
                local,
                host,
                binding,
                "reach",
                "pair",
                resources=make_resources(models={mine: ["invoke"]}),
                config={"mine": mine, "theirs": theirs},
                conversation_id=f"c-{mine}",
            )

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run, "m-a", "m-b")
                tg.start_soon(run, "m-b", "m-a")
        expected = {"mine": "ok", "theirs": "permission_denied.resource"}
        assert reports == {"m-a": expected, "m-b": expected}


async def test_a_plugin_past_the_sdk_reaches_what_docs_security_says(tmp_path: Path) -> None:
    local = warden_host()
    async with lbp_rt(tmp_path) as runtime, host_for(runtime, local) as host:
        binding, _ = await host.install_package(package(WARDEN))
        report = await answer(local, host, binding, "bypass", "go", available_apis=["state"])
        assert report == {
            # plugin-level actions without a run: what any plugin may do
            "plugin_level_llm_no_run": "ok",
            "plugin_level_version": "ok",
            # run-only actions need a live run of this plugin
            "state_no_run": "run_not_live",
            "history_no_run": "run_not_live",
            "run_list_no_run": "run_not_live",
            "state_unknown_run": "run_not_live",
            # naming its own run holds it to that run's grants
            "llm_own_run_ungranted": "resource_not_granted",
            "llm_own_run_granted": "ok",
            # who it is and whose storage it writes come from the connection, not the payload
            "state_own_run_spoofed": "ok",
            "storage_spoofed_owner": "ok",
        }
        spoofed = local.calls_of("state_set")[-1].data
        assert spoofed["caller_plugin_identity"] == "tester/warden"
        stored = local.calls_of("set_binary_storage")[-1].data
        assert (stored["owner_type"], stored["owner"]) == ("plugin", "tester/warden")
        # nothing refused by the runtime reached the host
        assert {c.action for c in local.calls} >= {"invoke_llm", "state_set"}
        assert not local.calls_of("state_get")
        assert not local.calls_of("history_page")


#: What reaches the host for each silent way to end a run: no blank message at all
#: (a blank message.completed, or a stream of blank deltas, is held back), and a run
#: that said nothing fails empty_result; a blank is_final delta after text passes.
SILENCES = (
    ("silent", ["run.failed"]),
    ("nothing", ["run.completed"]),
    ("blank-message", ["run.failed"]),
    ("blank-stream", ["run.failed"]),
    ("late-blank", ["message.delta", "message.delta", "run.completed"]),
)


@pytest.mark.parametrize("dialect", ["run_runner", "run_agent"])
async def test_a_silent_runner_fails_empty_result_in_both_dialects(
    tmp_path: Path, dialect: str
) -> None:
    local = warden_host()
    async with lbp_rt(tmp_path) as runtime, host_for(runtime, local) as host:
        binding, _ = await host.install_package(package(WARDEN))
        for text, kinds in SILENCES:
            started = await local.start_run("tester/warden", "reach", text)
            items = [
                item
                async for item in host.run_runner(
                    "tester",
                    "warden",
                    "reach",
                    started.context,
                    scope=binding,
                    name_on_wire=dialect,
                )
            ]
            assert [i["type"] for i in items] == kinds, (text, items)
            assert [i["sequence"] for i in items] == list(range(1, len(items) + 1))
            if kinds[-1] == "run.failed":
                assert items[-1]["data"]["code"] == "empty_result"
            outcome = await local.runs.drive(started, _replay(items))
            assert outcome.status == ("failed" if kinds[-1] == "run.failed" else "completed")
            if text == "late-blank":
                assert outcome.text == "Hi there"


async def _replay(items: list[dict[str, Any]]) -> AsyncGenerator[dict[str, Any]]:
    for item in items:
        yield item


async def test_a_secret_config_value_reaches_neither_the_logs_nor_the_error(
    tmp_path: Path,
) -> None:
    key = "vk-" + "q7w8e9r0t1y2u3i4"  # no well-known shape: only the manifest says it is secret
    async with installed(tmp_path) as (local, host, binding):
        outcome = await local.run(
            host, "tester", "warden", "reach", "leak", scope=binding, config={"api-key": key}
        )
        assert outcome.status == "failed"
        assert outcome.error is not None
        assert outcome.error["code"] == "runner.exception"
        assert "vendor refused key [redacted]" in outcome.error["error"]
        assert key not in str(run_events(local, outcome.run_id))

        async def logged() -> list[str]:
            lines = await host.get_plugin_logs("tester", "warden", scope=binding)
            return [line["text"] for line in lines if "calling the vendor" in line["text"]]

        async def any_logged() -> bool:
            return bool(await logged())

        await wait_until(any_logged)
        assert all(key not in text and "[redacted]" in text for text in await logged())


async def test_a_refusal_the_runner_lets_through_ends_the_run_with_its_own_code(
    tmp_path: Path,
) -> None:
    async with installed(tmp_path) as (local, host, binding):
        outcome = await local.run(host, "tester", "warden", "reach", "unguarded", scope=binding)
        assert outcome.status == "failed"
        assert outcome.error is not None
        assert outcome.error["code"] == "permission_denied.resource"  # not runner.exception
        assert outcome.error["retryable"] is False
        assert outcome.error["error"].startswith("PermissionDeniedError: ")
        assert "not-granted" in outcome.error["error"]


def run_events(local: LocalHost, run_id: str) -> list[dict[str, Any]]:
    session = local.runs.registry.get(run_id)
    assert session is not None
    return session.events
