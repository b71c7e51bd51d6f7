"""The run registry, its authorization snapshot and the steering queue, used directly."""

from __future__ import annotations

from typing import Any

import pytest

from langbot_plugin.api.entities.builtin.agent_runner.context_access import (
    ContextAPICapabilities,
)
from langbot_plugin.api.entities.builtin.agent_runner.operations import (
    DEFAULT_RESOURCE_OPERATIONS,
)
from langbot_plugin.api.entities.builtin.agent_runner.resources import (
    AgentResources,
    ModelResource,
)
from langbot_plugin.host.errors import (
    ApiNotAvailableError,
    ResourceNotGrantedError,
    RunDeadlineError,
    RunNotLiveError,
    RunNotOwnedError,
)
from langbot_plugin.host.grants import RunGrants, RunScope
from langbot_plugin.host.registry import RunRegistry
from langbot_plugin.host.steering import SteeringQueue
from langbot_plugin.rpc.errors import ConflictError, InvalidParamsError, NotFoundError
from tests.host.clock import FakeClock

OWNER = "tester/echoplug"

RESOURCES: dict[str, Any] = {
    "models": [
        {"model_id": "m-invoke", "operations": ["invoke"]},
        {"model_id": "m-empty", "operations": []},
        {"model_id": "m-missing-ops"},
    ],
    "tools": [{"tool_name": "adder", "operations": ["detail", "call"]}],
    "knowledge_bases": [{"kb_id": "kb1", "operations": ["retrieve"]}],
    "storage": {"plugin_storage": True, "workspace_storage": False},
}
APIS = {"state": True, "history_page": True, "run_cancel": False, "box": "yes"}


def make_registry(clock: FakeClock | None = None) -> RunRegistry:
    return RunRegistry(clock=clock or FakeClock())


def register(
    registry: RunRegistry, run_id: str = "run-1", *, deadline_at: float | None = None
) -> None:
    registry.register(
        run_id,
        plugin_identity=OWNER,
        runner_id="plugin:tester/echoplug/echo",
        grants=RunGrants.from_context(RESOURCES, APIS),
        scope=RunScope(conversation_id="conv-1", actor_id="u1", bot_id="bot"),
        deadline_at=deadline_at,
    )


def test_grants_are_frozen_from_the_context() -> None:
    grants = RunGrants.from_context(RESOURCES, APIS)
    grants.require_resource("model", "m-invoke", "invoke", "r")
    grants.require_resource("tool", "adder", "call", "r")
    grants.require_storage("plugin", "r")
    grants.require_api("state", "r")
    assert grants.apis == {"state", "history_page"}  # only exact true
    # empty or missing operations are the kind's defaults, as the released host reads them
    defaults = sorted(DEFAULT_RESOURCE_OPERATIONS["model"])
    assert grants.to_dict()["models"] == {
        "m-invoke": ["invoke"],
        "m-empty": defaults,
        "m-missing-ops": defaults,
    }
    grants.require_resource("model", "m-empty", "count_tokens", "r")
    grants.require_resource("model", "m-missing-ops", "stream", "r")


@pytest.mark.parametrize(
    ("kind", "resource", "operation"),
    [
        ("model", "m-invoke", "stream"),  # granted resource, other operation
        ("model", "m-empty", "teleport"),  # empty operations: only the kind's defaults
        ("model", "m-missing-ops", "teleport"),  # so do missing ones
        ("model", "not-listed", "invoke"),
        ("model", None, "invoke"),
        ("tool", "adder", "teleport"),
        ("knowledge_base", "kb1", "list"),
    ],
)
def test_a_resource_outside_the_grants_is_refused(
    kind: str, resource: str | None, operation: str
) -> None:
    grants = RunGrants.from_context(RESOURCES, APIS)
    with pytest.raises(ResourceNotGrantedError) as info:
        grants.require_resource(kind, resource, operation, "run-1")
    assert info.value.code == "resource_not_granted"
    assert info.value.details["kind"] == kind
    assert info.value.details["operation"] == operation


def test_storage_and_api_refusals_have_their_codes() -> None:
    grants = RunGrants.from_context(RESOURCES, APIS)
    with pytest.raises(ResourceNotGrantedError):
        grants.require_storage("workspace", "r")
    for api in ("run_cancel", "box", "steering_pull"):
        with pytest.raises(ApiNotAvailableError) as info:
            grants.require_api(api, "r")
        assert info.value.code == "api_not_available"


def test_grants_accept_the_sdk_models() -> None:
    resources = AgentResources(models=[ModelResource(model_id="m", operations=["invoke"])])
    grants = RunGrants.from_context(resources, ContextAPICapabilities(state=True))
    grants.require_resource("model", "m", "invoke", "r")
    assert grants.apis == {"state"}


def test_state_keys_are_injective_and_need_their_identity() -> None:
    a = RunScope(conversation_id="a:b", thread_id="c")
    b = RunScope(conversation_id="a", thread_id="b:c")
    assert a.state_key("conversation", "r") != b.state_key("conversation", "r")
    assert a.state_key("conversation", "r") != a.state_key("conversation", "other-runner")
    assert a.state_key("actor", "r") is None
    assert a.state_key("subject", "r") is None
    assert a.state_key("nonsense", "r") is None
    assert set(a.state_keys("r")) == {"conversation", "runner"}
    both = RunScope(actor_id="u", subject_id="s")
    assert set(both.state_keys("r")) == {"actor", "subject", "runner"}


def test_scope_is_read_from_a_context_dict() -> None:
    scope = RunScope.from_context(
        {
            "conversation": {"conversation_id": "c", "bot_id": "b", "workspace_id": "w"},
            "actor": {"actor_type": "user", "actor_id": "u"},
            "subject": {"subject_type": "message", "subject_id": ""},
        },
        binding_id="bind",
    )
    assert scope == RunScope(
        workspace_id="w",
        bot_id="b",
        conversation_id="c",
        actor_type="user",
        actor_id="u",
        subject_type="message",
        binding_id="bind",
    )
    assert scope.sees_conversation("c", None)
    assert not scope.sees_conversation("c", "thread")
    assert not RunScope().sees_conversation(None, None)


def test_authorize_checks_existence_owner_liveness_and_deadline_in_order() -> None:
    clock = FakeClock()
    registry = make_registry(clock)
    register(registry, deadline_at=clock.now + 10)

    assert registry.authorize("run-1", OWNER).run_id == "run-1"
    cases: list[tuple[object, object, type[Exception], str]] = [
        ("nope", OWNER, RunNotLiveError, "run_not_live"),
        (None, OWNER, RunNotLiveError, "run_not_live"),
        ("run-1", None, RunNotOwnedError, "run_not_owned"),
        ("run-1", "", RunNotOwnedError, "run_not_owned"),
        ("run-1", "evil/plugin", RunNotOwnedError, "run_not_owned"),
    ]
    for run_id, caller, error, code in cases:
        with pytest.raises(error) as info:
            registry.authorize(run_id, caller)
        assert info.value.code == code  # type: ignore[attr-defined]

    clock.advance(11)
    with pytest.raises(RunDeadlineError) as deadline:
        registry.authorize("run-1", OWNER)
    assert deadline.value.code == "deadline_exceeded"
    # A stranger still learns nothing but "not yours".
    with pytest.raises(RunNotOwnedError):
        registry.authorize("run-1", "evil/plugin")

    assert [s.run_id for s in registry.expire()] == ["run-1"]
    with pytest.raises(RunNotLiveError) as expired:
        registry.authorize("run-1", OWNER)
    assert expired.value.details["status"] == "timeout"


def test_finished_runs_stay_readable_but_never_authorize() -> None:
    registry = make_registry()
    register(registry)
    session = registry.get("run-1")
    assert session is not None
    assert session.steering.push({"n": 1})
    registry.finish("run-1", "completed", usage={"total_tokens": 3})
    with pytest.raises(RunNotLiveError) as info:
        registry.authorize("run-1", OWNER)
    assert info.value.details["status"] == "completed"
    assert registry.require("run-1").record()["status"] == "completed"
    assert registry.require("run-1").record()["usage"] == {"total_tokens": 3}
    assert session.cancel_requested.is_set()
    assert not session.steering.push({"n": 2})  # queue closed with the run
    # Finishing again changes nothing.
    assert registry.finish("run-1", "failed").status == "completed"
    with pytest.raises(ValueError, match="terminal"):
        registry.finish("run-1", "running")


def test_register_refuses_duplicates_and_bad_identities() -> None:
    registry = make_registry()
    register(registry)
    with pytest.raises(ConflictError):
        register(registry)
    with pytest.raises(ValueError, match="author/name"):
        registry.register("x", plugin_identity="noslash", runner_id="r", grants=RunGrants())
    with pytest.raises(ValueError, match="empty"):
        registry.register("", plugin_identity=OWNER, runner_id="r", grants=RunGrants())
    with pytest.raises(NotFoundError):
        registry.require("missing")


@pytest.mark.anyio
async def test_cancel_request_sets_the_event_once() -> None:
    clock = FakeClock()
    registry = make_registry(clock)
    register(registry)
    session = registry.request_cancel("run-1", "user asked")
    assert session.cancel_requested.is_set()
    first = session.cancel_requested_at
    clock.advance(5)
    registry.request_cancel("run-1", "again")
    assert session.cancel_requested_at == first
    assert session.status == "running"  # the driver ends it
    assert session.record()["cancel_requested_at"] == int(first or 0)
    assert session.status_reason == "user asked"


def test_old_finished_runs_are_forgotten_beyond_retention() -> None:
    registry = RunRegistry(clock=FakeClock(), retain_finished=2)
    for n in range(4):
        register(registry, f"run-{n}")
        registry.finish(f"run-{n}", "completed")
    register(registry, "live")
    registry.expire()
    assert [s.run_id for s in registry] == ["run-2", "run-3", "live"]
    assert [s.run_id for s in registry.active()] == ["live"]


def test_steering_target_is_the_oldest_matching_live_run() -> None:
    registry = make_registry()
    grants = RunGrants.from_context({}, {"steering_pull": True})
    scope = RunScope(conversation_id="c")
    for run_id in ("a", "b"):
        registry.register(run_id, plugin_identity=OWNER, runner_id="r", grants=grants, scope=scope)
    registry.register(
        "no-grant", plugin_identity=OWNER, runner_id="r", grants=RunGrants(), scope=scope
    )
    target = registry.steering_target(scope, "r")
    assert target is not None
    assert target.run_id == "a"
    assert registry.steering_target(scope, "other-runner") is None
    assert registry.steering_target(RunScope(conversation_id="d"), "r") is None


def test_steering_queue_pulls_all_or_one() -> None:
    queue = SteeringQueue(capacity=3)
    for n in range(3):
        assert queue.push({"n": n})
    assert not queue.push({"n": 3})
    assert queue.pull("one") == [{"n": 0}]
    assert queue.pull("all", limit=1) == [{"n": 1}]
    assert queue.pull("one-at-a-time") == [{"n": 2}]
    assert queue.pull() == []
    with pytest.raises(InvalidParamsError):
        queue.pull("some")
    with pytest.raises(InvalidParamsError):
        queue.pull("all", limit=0)
    item = {"nested": {"a": 1}}
    queue.push(item)
    item["nested"]["a"] = 2  # the queue kept a copy
    assert queue.pull() == [{"nested": {"a": 1}}]
