"""The runtime's per-run audit (``runtime/run_audit.py``): which run a refusal goes to,
the bounds and the dropped counts, who may report to a run, and when a record is
collected."""

from __future__ import annotations

from typing import Any

import pytest

from langbot_plugin.protocol.errors import (
    ResourceNotGrantedError,
    RunNotLiveError,
    RunNotOwnedError,
)
from langbot_plugin.protocol.run_audit import RunAuditEntry
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.rpc.redaction import mark_secret
from langbot_plugin.runtime.run_audit import RunAudits
from langbot_plugin.runtime.runs import LiveRun, LiveRuns

LLM = "invoke_llm"


def refusal(code: str = "resource_not_granted") -> ResourceNotGrantedError:
    error = ResourceNotGrantedError("model 'm-b' is not granted")
    assert error.code == code
    return error


def llm_call(run_id: str | None, model: str = "m-b") -> dict[str, Any]:
    return {"llm_model_uuid": model, "run_id": run_id}


def sdk_entry(code: str = "permission_denied.resource") -> RunAuditEntry:
    return RunAuditEntry(at=1.0, origin="sdk", action=LLM, resource="m-b", code=code)


def test_a_refusal_naming_an_own_run_goes_to_that_run_only() -> None:
    audits = RunAudits()
    audits.open("r1", "a/p")
    audits.open("r2", "a/p")
    assert audits.refused(LLM, llm_call("r1"), "a/p", refusal()) == 1
    [entry] = audits.read("r1").entries
    assert (entry.origin, entry.action, entry.resource, entry.code) == (
        "runtime",
        LLM,
        "m-b",
        "resource_not_granted",
    )
    assert entry.detail == {"error": "model 'm-b' is not granted"}
    assert audits.read("r2").entries == []


def test_a_refusal_naming_no_run_of_the_caller_goes_to_each_of_its_live_runs() -> None:
    audits = RunAudits()
    audits.open("r1", "a/p")
    audits.open("r2", "a/p")
    audits.open("theirs", "b/q")
    audits.close("r2")
    # another plugin's run, a made-up id, no id: this plugin's live runs hold it
    for named in ("theirs", "made-up", None):
        audits.refused(LLM, llm_call(named), "a/p", RunNotOwnedError("not yours"))
    details = [e.detail for e in audits.read("r1").entries]
    assert [d["named_run"] for d in details] == ["theirs", "made-up", None]
    assert {d["attributed"] for d in details} == {"plugin"}
    assert audits.read("r2").entries == []  # ended: not live when the call came
    assert audits.read("theirs").entries == []  # another plugin cannot write into it
    # a plugin with no live run has no audit to hold it
    assert audits.refused(LLM, llm_call(None), "c/z", refusal()) == 0


def test_the_per_run_and_total_bounds_hold_and_count_what_they_dropped() -> None:
    audits = RunAudits(per_run=3, total=5)
    audits.open("r1", "a/p")
    audits.open("r2", "a/p")
    for _ in range(4):
        audits.refused(LLM, llm_call("r1"), "a/p", refusal())
    assert (len(audits.read("r1").entries), audits.read("r1").dropped) == (3, 1)
    for _ in range(3):
        audits.refused(LLM, llm_call("r2"), "a/p", refusal())
    assert (len(audits.read("r2").entries), audits.read("r2").dropped) == (2, 1)  # total: 5
    assert audits.kept == 5
    kept = audits.reported("r2", "a/p", [sdk_entry()], dropped=7)
    assert kept == 0
    assert audits.read("r2").dropped == 1 + 7 + 1


def test_ended_records_are_kept_for_the_host_then_collected() -> None:
    audits = RunAudits(retain=2)
    for run_id in ("r1", "r2", "r3"):
        audits.open(run_id, "a/p")
        audits.refused(LLM, llm_call(run_id), "a/p", refusal())
    assert audits.kept == 3
    audits.close("r1")
    audits.close("r2")
    assert (audits.read("r1").known, audits.read("r1").live) == (True, False)
    assert audits.read("r3").live
    audits.close("r3")  # a third ended run: the oldest is collected
    assert not audits.read("r1").known
    assert audits.read("r1").entries == []
    assert ("r1" in audits, "r2" in audits, "r3" in audits) == (False, True, True)
    assert audits.kept == 2


def test_a_reused_run_id_starts_a_new_record() -> None:
    audits = RunAudits()
    audits.open("r1", "a/p")
    audits.refused(LLM, llm_call("r1"), "a/p", refusal())
    audits.close("r1")
    audits.open("r1", "a/p")
    assert audits.read("r1").entries == []
    assert audits.kept == 0


def test_only_the_runs_plugin_may_report_the_sdks_refusals_for_it() -> None:
    audits = RunAudits()
    audits.open("r1", "a/p")
    with pytest.raises(RunNotOwnedError):
        audits.reported("r1", "b/q", [sdk_entry()])
    with pytest.raises(RunNotLiveError):
        audits.reported("never", "a/p", [sdk_entry()])
    assert audits.read("r1").entries == []
    # reported entries are the SDK's, whatever they claim, and redacted
    mark_secret("sk-live-" + "0123456789abcdef")
    forged = RunAuditEntry(
        at=2.0, origin="runtime", action=LLM, resource="sk-live-0123456789abcdef", code="x"
    )
    assert audits.reported("r1", "a/p", [forged]) == 1
    [entry] = audits.read("r1").entries
    assert (entry.origin, entry.resource) == ("sdk", "[redacted]")
    audits.close("r1")
    assert audits.reported("r1", "a/p", [sdk_entry()]) == 1  # ended, still kept


def test_live_runs_record_every_refusal_of_their_authorization() -> None:
    runs = LiveRuns()
    context = {"resources": {"models": [{"model_id": "m-a", "operations": ["invoke"]}]}}
    runs.open(LiveRun.from_context("r1", "a/p", context))
    with pytest.raises(ResourceNotGrantedError):
        runs.authorize(LLM, llm_call("r1"), "a/p")
    with pytest.raises(RunNotLiveError):
        runs.authorize("state_get", {"scope": "conversation", "key": "k"}, "a/p")
    runs.authorize(LLM, llm_call("r1", "m-a"), "a/p")  # allowed: the host records it
    assert [e.code for e in runs.audit.read("r1").entries] == [
        "resource_not_granted",
        "run_not_live",
    ]
    runs.close("r1")
    assert runs.audit.read("r1").known
    assert not runs.audit.read("r1").live


def scope(instance: str, workspace: str) -> ActionScope:
    return ActionScope(instance_uuid=instance, workspace_uuid=workspace)


def test_a_record_is_read_only_from_its_runs_workspace() -> None:
    audits = RunAudits()
    audits.open("r1", "a/p", scope("inst", "ws-a"))
    audits.open("r2", "a/p")  # a run started without a workspace
    audits.refused(LLM, llm_call("r1"), "a/p", refusal())
    audits.refused(LLM, llm_call("r2"), "a/p", refusal())
    elsewhere = audits.read("r1", scope("inst", "ws-b"))
    assert (elsewhere.known, elsewhere.entries) == (False, [])
    assert len(audits.read("r1", scope("inst", "ws-a")).entries) == 1
    assert len(audits.read("r1", scope("other-instance", "ws-a")).entries) == 0
    assert len(audits.read("r1").entries) == 1  # an asker naming no workspace
    assert len(audits.read("r2", scope("inst", "ws-b")).entries) == 1  # a run naming none
