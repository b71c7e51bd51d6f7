"""The audit of a run, through real ``lbp rt`` and worker processes: it lists every host
call the run made and every refusal, whoever made it (the host gate, the runtime, the
SDK before sending), each with its code, bounded, with no secret in it, and the
runtime's refusals survive a worker that dies."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from langbot_plugin.host import LocalHost, PluginRuntimeClient, ScriptedModel
from langbot_plugin.host.run_context import make_resources
from langbot_plugin.protocol.control_link import ExecutionMode
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.runtime.run_audit import MAX_ENTRIES_PER_RUN
from tests.e2e.processes import host_for, lbp_rt
from tests.support.pypi import package

pytestmark = pytest.mark.anyio

WARDEN = Path(__file__).resolve().parent.parent / "fixtures" / "plugins" / "warden"
#: A key of no well-known shape: only the runner's manifest says it is secret.
SECRET = "vk-" + "z9x8c7v6b5n4m3l2"


@asynccontextmanager
async def warden(
    tmp_path: Path, execution_mode: ExecutionMode = "dedicated"
) -> AsyncGenerator[tuple[LocalHost, PluginRuntimeClient, ActionScope]]:
    """A real ``lbp rt`` with the warden installed, and the host that drives it."""
    local = LocalHost(models={name: ScriptedModel() for name in ("m-a", "m-b")})
    async with lbp_rt(tmp_path) as runtime, host_for(runtime, local) as host:
        binding, _ = await host.install_package(package(WARDEN), execution_mode=execution_mode)
        yield local, host, binding


async def audit_of(
    local: LocalHost, host: PluginRuntimeClient, binding: ActionScope, text: str, **options: Any
) -> tuple[Any, list[dict[str, Any]]]:
    options.setdefault("resources", make_resources(models={"m-a": ["invoke"]}))
    outcome = await local.run(host, "tester", "warden", "auditor", text, scope=binding, **options)
    return outcome, await local.runs.audit.entries(outcome.run_id)


def calls(entries: list[dict[str, Any]], origin: str) -> list[tuple[Any, ...]]:
    return [
        (e["action"], e["resource"], e["grant"], e["code"])
        for e in entries
        if e["kind"] == "call" and e["origin"] == origin
    ]


def ended(entries: list[dict[str, Any]]) -> dict[str, Any]:
    [end] = [e for e in entries if e["kind"] == "run.ended"]
    return end["detail"]


@pytest.mark.parametrize("execution_mode", ["dedicated", "shared-runtime-v1"])
async def test_the_audit_lists_every_call_and_every_refusal_with_no_secret(
    tmp_path: Path, execution_mode: ExecutionMode
) -> None:
    async with warden(tmp_path, execution_mode) as (local, host, binding):
        outcome, entries = await audit_of(
            local,
            host,
            binding,
            "every",
            config={"api-key": SECRET},
            available_apis=["state"],
            state_scopes=["conversation"],
        )
        assert outcome.status == "completed", outcome.error
        assert json.loads(outcome.text) == {
            "host_llm": "ok",
            "host_state": "ok",
            "gate_state": "resource_not_granted",
            "runtime_llm": "resource_not_granted",
            "runtime_secret": "resource_not_granted",
            "runtime_no_run": "run_not_live",
            "sdk_llm": "permission_denied.resource",
            "sdk_secret": "permission_denied.resource",
        }
        # what reached the host, allowed or refused by its gate
        assert calls(entries, "host") == [
            ("invoke_llm", "m-a", "model:invoke", None),
            ("state_set", "conversation:k", "api:state", None),
            ("state_set", "actor:k", None, "resource_not_granted"),
        ]
        # what the runtime refused (the last one named no run: held to this plugin's run)
        assert calls(entries, "runtime") == [
            ("invoke_llm", "m-b", None, "resource_not_granted"),
            ("invoke_llm", "[redacted]", None, "resource_not_granted"),
            ("state_get", "conversation:k", None, "run_not_live"),
        ]
        no_run = [e for e in entries if e["origin"] == "runtime"][-1]["detail"]
        assert no_run["attributed"] == "plugin"
        assert no_run["named_run"] is None
        # what the SDK refused before sending anything
        assert calls(entries, "sdk") == [
            ("invoke_llm", "m-b", None, "permission_denied.resource"),
            ("invoke_llm", "[redacted]", None, "permission_denied.resource"),
        ]
        end = ended(entries)
        assert end["status"] == "completed"
        assert (end["runtime_audit"], end["runtime_dropped_entries"]) == ("pulled", 0)
        # the host was told nothing secret: the runtime and the worker redacted it
        exported = await local.runs.audit.export_jsonl(outcome.run_id)
        assert SECRET not in exported
        assert exported.count("[redacted]") >= 2


@pytest.mark.parametrize("origin", ["runtime", "sdk"])
async def test_the_runtime_keeps_a_bounded_audit_and_counts_what_it_dropped(
    tmp_path: Path, origin: str
) -> None:
    count = MAX_ENTRIES_PER_RUN + 44
    async with warden(tmp_path) as (local, host, binding):
        outcome, entries = await audit_of(
            local, host, binding, f"flood-{origin}", config={"count": count}
        )
        assert outcome.status == "completed", outcome.error
        kept = calls(entries, origin)
        assert len(kept) == MAX_ENTRIES_PER_RUN
        assert set(kept) == {("invoke_llm", "m-b", None, refused_code(origin))}
        assert ended(entries)["runtime_dropped_entries"] == count - MAX_ENTRIES_PER_RUN
        # asked again, the runtime answers the same record: reading removes nothing
        again = await host.get_run_audit(outcome.run_id)
        assert (again.known, again.live) == (True, False)
        assert (len(again.entries), again.dropped) == (MAX_ENTRIES_PER_RUN, 44)


def refused_code(origin: str) -> str:
    return "resource_not_granted" if origin == "runtime" else "permission_denied.resource"


async def test_a_runtime_refusal_reaches_the_audit_when_the_worker_then_dies(
    tmp_path: Path,
) -> None:
    async with warden(tmp_path) as (local, host, binding):
        outcome, entries = await audit_of(local, host, binding, "crash")
        assert outcome.status == "failed"
        assert outcome.error is not None
        assert outcome.error["code"] == "runner.forward_exception"  # the worker died
        assert calls(entries, "runtime") == [("invoke_llm", "m-b", None, "resource_not_granted")]
        # the SDK's refusal of the step before went out with that step's result
        assert calls(entries, "sdk") == [("invoke_llm", "m-b", None, "permission_denied.resource")]
        assert ended(entries)["runtime_audit"] == "pulled"


async def test_the_sdks_refusals_of_a_runner_that_raises_reach_the_audit(
    tmp_path: Path,
) -> None:
    async with warden(tmp_path) as (local, host, binding):
        outcome, entries = await audit_of(local, host, binding, "raise")
        assert outcome.error is not None
        assert outcome.error["code"] == "runner.exception"
        assert calls(entries, "sdk") == [("invoke_llm", "m-b", None, "permission_denied.resource")]


async def test_a_host_that_never_asks_changes_nothing(tmp_path: Path) -> None:
    """The released host never sends ``get_run_audit``: a run driven without it keeps
    the host's own audit only, and the runtime's record is still there to ask."""
    async with warden(tmp_path) as (local, host, binding):
        started = await local.start_run(
            "tester/warden",
            "auditor",
            "crash",
            resources=make_resources(models={"m-a": ["invoke"]}),
        )
        items = host.run_runner("tester", "warden", "auditor", started.context, scope=binding)
        outcome = await local.runs.drive(started, items)
        assert outcome.status == "failed"
        entries = await local.runs.audit.entries(outcome.run_id)
        assert calls(entries, "runtime") == []
        assert ended(entries)["runtime_audit"] == "not_asked"
        record = await host.get_run_audit(outcome.run_id)
        assert [(e.origin, e.code) for e in record.entries] == [
            ("sdk", "permission_denied.resource"),
            ("runtime", "resource_not_granted"),
        ]


async def test_a_run_audit_is_read_only_from_the_runs_workspace(tmp_path: Path) -> None:
    """Another workspace's host connection asking for a run's record gets "unknown", as
    for a run never seen; the run's own workspace, or an asker naming none, reads it."""
    async with warden(tmp_path) as (local, host, binding):
        outcome, _ = await audit_of(local, host, binding, "flood-runtime", config={"count": 1})
        elsewhere = binding.model_copy(update={"workspace_uuid": "another-workspace"})
        hidden = await host.get_run_audit(outcome.run_id, scope=elsewhere)
        assert (hidden.known, hidden.entries, hidden.dropped) == (False, [], 0)
        own = await host.get_run_audit(outcome.run_id, scope=binding)
        assert own.known
        assert [e.code for e in own.entries] == ["resource_not_granted"]
        unscoped = await host.get_run_audit(outcome.run_id, scope=ActionScope())
        assert unscoped.entries == own.entries
